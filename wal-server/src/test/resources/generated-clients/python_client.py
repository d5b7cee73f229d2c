"""Drives a running walden.jar with the Python client openapi-generator made from the OpenAPI document (GeneratedClientsIT).

Run as: python3 python_client.py BASE_URL TOKEN, with the generated package (walden_client) on PYTHONPATH. Each check
is an assert naming what failed; the last line printed is "ok N checks".
"""
import base64
import datetime
import struct
import sys

import walden_client
from walden_client import AdminApi, ApiClient, ApiException, Configuration, CursorsApi, DataApi
from walden_client.models import CursorPosition, Durability, RecordPage

base, token = sys.argv[1], sys.argv[2]
client = ApiClient(Configuration(host=base, access_token=token))
data, cursors, admin = DataApi(client), CursorsApi(client), AdminApi(client)
checks = 0


def check(condition, what):
    global checks
    assert condition, what
    checks += 1


# Bytes go as they are: none is lost, none is added (no JSON quotes, no encoding).
payload = b'\x00\xff binary "quoted" \xe2\x82\xac\n'
appended = data.append(body=payload, durability=Durability.LOCAL, type=7)
page = data.read(var_from=appended.lsn, limit=1)
check(isinstance(page, RecordPage), "a read is typed as a RecordPage: %r" % type(page))
check(base64.b64decode(page.records[0].data) == payload, "the payload read back: %r" % page.records[0].data)
check(page.records[0].type == 7, "the type read back")

# A time as this client sends it: datetime_format %z, an offset without a colon (2026-11-26T19:36:43.692030+0000).
since = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(milliseconds=1)
after = data.append(body=b"after the time", durability=Durability.LOCAL)
by_time = data.read(from_time=since, limit=10)
check([r.lsn for r in by_time.records][-1] == after.lsn, "a read from a time: %r" % by_time.records)
check(all(r.time >= since for r in by_time.records), "every record at or after the time")

# A batch: each record a 4-byte big-endian length, then its payload.
records = [b"first of the batch", b"", b"\x01\x02"]
batch = data.append_batch(body=b"".join(struct.pack(">I", len(r)) + r for r in records), durability=Durability.LOCAL)
check(len(batch.lsns) == 3, "a batch answers every LSN")
got = data.read(var_from=batch.lsns[0], limit=3).records
check([base64.b64decode(r.data) for r in got] == records, "the batch read back: %r" % got)

# Cursors, status, and an error as the client raises it.
cursors.set_cursor("python", CursorPosition(lsn=batch.lsns[1]))
check(cursors.get_cursor("python").lsn == batch.lsns[1], "a cursor set and read")
check(data.read(cursor="python", limit=1).records[0].lsn == batch.lsns[1], "a read from the cursor")
check(admin.status().role == "primary", "the status")
try:
    data.read(var_from="not-an-lsn")
    check(False, "a malformed LSN is refused")
except ApiException as e:
    check(e.status == 400 and '"bad_parameter"' in e.body, "the documented error: %s %s" % (e.status, e.body))

print("ok %d checks" % checks)
