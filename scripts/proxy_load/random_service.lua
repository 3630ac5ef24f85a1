-- SPDX-License-Identifier: MIT
-- wrk script of scripts/proxy_load.sh: each request goes to a random
-- service, GET /svc/<0..S-1>/x with S from PROXY_LOAD_SERVICES, and every
-- answer that is not 2xx is counted. done() prints one line for the script:
--   wrk_result requests=N duration_us=N p50_us=N p99_us=N non2xx=N socket_errors=N
-- (latency percentiles from wrk's own latency distribution; socket errors
-- are wrk's connect + read + write + timeout errors).

local services = tonumber(os.getenv("PROXY_LOAD_SERVICES") or "10000")
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  non2xx = 0
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16))
end

function request()
  return wrk.format("GET", "/svc/" .. math.random(0, services - 1) .. "/x")
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
  end
end

function done(summary, latency, requests)
  local non = 0
  for _, thread in ipairs(threads) do
    non = non + (thread:get("non2xx") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    "wrk_result requests=%d duration_us=%d p50_us=%d p99_us=%d non2xx=%d socket_errors=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), non,
    e.connect + e.read + e.write + e.timeout))
end
