from tests.foundation import client, database, enqueuer, settings  # noqa: F401  (fixtures)
from tests.services import postgres_server, postgres_url, redis_server  # noqa: F401  (fixtures)
from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)
