-- wrk script for `npm run bench`: one scenario per run, rotating over the seeded API keys and the
-- ids each key owns, so every request is an authorized one that answers 2xx.
--
--   wrk ... -s bench/scenarios.lua <url> -- <data file> <scenario> <run number> <threads> [<slice> <slices>]
--
-- Scenarios: get, list, patch, skip, create; patch-keyed (patch with a new Idempotency-Key each). The data file is written by bench/lib/seed.mjs.
-- Each thread takes its own slice of the users, so no two threads write the same row. With
-- several replenish instances (`--instances`), one wrk process drives each, and each process
-- takes slice <slice> (from 0) of <slices> before its threads divide it: no two processes write
-- the same row either (two PATCHes of an item to the same quantity would store one event).

local threads = {}
local thread_count = 0

function setup(thread)
  thread:set("thread_index", thread_count)
  thread_count = thread_count + 1
  table.insert(threads, thread)
end

local users = {}
local subscribables = {}
local scenario
local run = 0
local counter = 0
-- non-2xx answers, counted per thread in response() and summed in done()
bad = 0

local function split(text, sep)
  local out = {}
  for part in string.gmatch(text, "[^" .. sep .. "]+") do out[#out + 1] = part end
  return out
end

function init(args)
  local file, nthreads = args[1], tonumber(args[4] or "1")
  local slice, slices = tonumber(args[5] or "0"), tonumber(args[6] or "1")
  scenario = args[2]
  run = tonumber(args[3] or "0")
  local index = 0
  for line in io.lines(file) do
    local fields = split(line, " ")
    if fields[1] == "subscribables" then
      subscribables = split(fields[2], ",")
    else
      if index % (nthreads * slices) == slice * nthreads + (thread_index or 0) then
        users[#users + 1] = {
          subscriptions = split(fields[2], ","),
          line_items = split(fields[3], ","),
          get = { ["Authorization"] = "Bearer " .. fields[1] },
          post = { ["Authorization"] = "Bearer " .. fields[1], ["Content-Type"] = "application/json" },
        }
      end
      index = index + 1
    end
  end
  if #users == 0 then error("no users for this thread in " .. file) end
end

function request()
  local n = counter
  counter = counter + 1
  local user = users[(n % #users) + 1]
  local round = math.floor(n / #users)
  if scenario == "get" then
    local id = user.subscriptions[(round % #user.subscriptions) + 1]
    return wrk.format("GET", "/api/v1/subscriptions/" .. id, user.get)
  elseif scenario == "list" then
    return wrk.format("GET", "/api/v1/subscriptions", user.get)
  elseif scenario == "skip" then
    local id = user.subscriptions[(round % #user.subscriptions) + 1]
    return wrk.format("POST", "/api/v1/subscriptions/" .. id .. "/skip", user.get, "")
  elseif scenario == "patch" or scenario == "patch-keyed" then
    local items = #user.line_items
    local id = user.line_items[(round % items) + 1]
    -- A new quantity on every visit of an item (a PATCH to the same value writes nothing): it
    -- changes with each pass over the thread's items and with each wrk run of the bench.
    local pass = math.floor(round / items)
    local quantity = ((run * 97 + pass + 1) % 9999) + 1
    local headers = user.post
    if scenario == "patch-keyed" then
      -- A new Idempotency-Key on every request: each also stores its answer (bench/wal-growth.mjs).
      headers = { ["Authorization"] = user.post["Authorization"], ["Content-Type"] = "application/json",
        ["Idempotency-Key"] = "wal-" .. run .. "-" .. (thread_index or 0) .. "-" .. n }
    end
    return wrk.format("PATCH", "/api/v1/line_items/" .. id, headers,
      '{"subscription_line_item":{"quantity":' .. quantity .. '}}')
  elseif scenario == "create" then
    local a = subscribables[(n % #subscribables) + 1]
    local b = subscribables[((n + 1) % #subscribables) + 1]
    return wrk.format("POST", "/api/v1/subscriptions", user.post,
      '{"subscription":{"interval_length":1,"interval_units":"month","line_items_attributes":[' ..
      '{"subscribable_id":' .. a .. ',"quantity":2},{"subscribable_id":' .. b .. ',"quantity":1}]}}')
  end
  error("unknown scenario " .. tostring(scenario))
end

function response(status, headers, body)
  if status < 200 or status > 299 then bad = bad + 1 end
end

function done(summary, latency, requests)
  local non2xx = 0
  for _, thread in ipairs(threads) do non2xx = non2xx + (thread:get("bad") or 0) end
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,"non2xx":%d,"status_errors":%d,' ..
    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,' ..
    '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, non2xx, e.status,
    e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
