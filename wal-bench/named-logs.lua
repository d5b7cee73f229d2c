-- wrk's requests for wal-bench/named-logs.sh: POST 64-byte bodies, each request to the next of N logs.
--   wrk -t T -c C -d S -s named-logs.lua http://127.0.0.1:PORT -- PATH N LEVEL
-- PATH names the log by %d (its number, 1..N: /v1/logs/log-%d/records) or is one path (/v1/records, N = 1); every
-- request asks ?durability=LEVEL. Each wrk thread cycles through the N paths request by request, the threads from
-- different starting logs, so that the connections' requests in flight at any moment are spread over the logs (wrk
-- gives a script no handle on which connection a request goes out on, so the cycle is per request, not per
-- connection). done() prints one RESULT line for named-logs.sh to read: latencies in microseconds, and wrk's error
-- counts (status: answers of 400 and above; connect, read, write, timeout: socket errors).

local threads = {}

function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

function init(args)
  local path, n, level = args[1], tonumber(args[2]), args[3]
  local body = string.rep("x", 64)
  local headers = {["Content-Type"] = "application/octet-stream"}
  requests = {}
  for k = 1, n do
    requests[k] = wrk.format("POST", string.format(path, k) .. "?durability=" .. level, headers, body)
  end
  count = n
  -- named-logs.sh runs two threads: the second starts half way round, so they do not walk the logs in step
  next_log = (thread_index * math.floor(n / 2)) % n
end

function request()
  next_log = next_log % count + 1
  return requests[next_log]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d status_errors=%d connect=%d read=%d write=%d timeout=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect, e.read, e.write, e.timeout))
end
