-- SPDX-License-Identifier: MIT
-- wrk script of scripts/proxy_load.sh: each request goes to a random
-- service, GET /svc/<0..S-1>/x with S from PROXY_LOAD_SERVICES, from a
-- table of requests each thread formats once in init() (formatting a
-- request per call, or parsing each response in Lua, would take processor
-- time from the proxy on a 2-core machine). Answers that are not 2xx are
-- wrk's own count (summary.errors.status). done() prints one line:
--   wrk_result requests=N duration_us=N p50_us=N p99_us=N non2xx=N socket_errors=N
-- (latency percentiles from wrk's own latency distribution; socket errors
-- are wrk's connect + read + write + timeout errors).

local services = tonumber(os.getenv("PROXY_LOAD_SERVICES") or "10000")
local kRequests = 4096
local prepared = {}
local next_request = 1

function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16))
  for i = 1, kRequests do
    prepared[i] = wrk.format("GET", "/svc/" .. math.random(0, services - 1) .. "/x")
  end
end

function request()
  local r = prepared[next_request]
  next_request = next_request % kRequests + 1
  return r
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "wrk_result requests=%d duration_us=%d p50_us=%d p99_us=%d non2xx=%d socket_errors=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout))
end
