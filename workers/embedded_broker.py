"""kombu's filesystem transport, with messages that appear whole.

The stock transport creates the message file, then locks and writes it. A consumer polling
the same folder may rename the file away in between (renames ignore advisory locks), read
zero bytes and lose the task. Here a message is written under a staging folder on the same
filesystem and renamed into the queue folder in one step, so a consumer sees all of it or
nothing. Used only by the embedded default (`scrub serve` without Redis).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from time import monotonic

from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

TRANSPORT = "workers.embedded_broker:AtomicFilesystemTransport"


class AtomicChannel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        staging = Path(self.transport_options["staging_folder"])
        partial = staging / name
        try:
            partial.write_bytes(str_to_bytes(dumps(payload)))
            os.replace(partial, Path(self.data_folder_out) / name)
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add message {name!r} to {self.data_folder_out!r}") from exc


class AtomicFilesystemTransport(filesystem.Transport):
    Channel = AtomicChannel
