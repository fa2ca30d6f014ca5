from tests.fakes.fake_github import fake_github  # noqa: F401  (fixture)
from tests.services import postgres_server, postgres_url, redis_server  # noqa: F401  (fixtures)
from tests.reliability.restartable import own_postgres, own_redis  # noqa: F401  (fixtures)
