from tests.foundation import client, database, enqueuer, settings  # noqa: F401  (fixtures)
from tests.services import postgres_server, postgres_url, redis_server  # noqa: F401  (fixtures)
