"""The Vision quota's Redis side: its key names and the Lua scripts that change them atomically.

Every key of one quota shares the hash tag `{scope}` (scope: the Cloud project and the Vision
endpoint, app.engines.vision_quota), so a script's keys sit in one Redis Cluster slot. Times
are Redis's own clock (TIME, in milliseconds): no worker's clock decides anything.

A request's entry, in the window and among the leases, is named `<random id>:<pages>`, so a
script knows the pages of any entry it drops without a lookup. The keys (docs/VISION_QUOTA.md):

  chunk-ocr:vision-quota:{scope}:sent          zset   requests in the window; score: when their
                                                      window time starts (see ACQUIRE)
  chunk-ocr:vision-quota:{scope}:sent-pages    string pages of the entries of `sent`
  chunk-ocr:vision-quota:{scope}:leases        zset   requests in flight; score: lease expiry
  chunk-ocr:vision-quota:{scope}:leased-pages  string pages of the entries of `leases`
  chunk-ocr:vision-quota:{scope}:backoff       hash   until, set_at (ms), strikes: the fleet's
                                                      back-off after a 429
  chunk-ocr:vision-quota:{scope}:counters      hash   fleet-wide counters (COUNTER_FIELDS),
                                                      gone after COUNTERS_TTL_MS without a request
"""

from __future__ import annotations

from dataclasses import dataclass

KEY_PREFIX = "chunk-ocr:vision-quota:"
# The counters of a quota nobody used for a week go (a metric reads that as a counter reset).
COUNTERS_TTL_MS = 7 * 24 * 3600 * 1000

# The counters hash's fields, each a running total since the key was created.
COUNTER_FIELDS = (
    "requests",  # requests granted (each then sent to Vision)
    "pages",  # pages in those requests
    "throttled",  # requests that waited at least once before their grant
    "waited_ms",  # milliseconds those requests waited, in all
    "exhausted",  # RESOURCE_EXHAUSTED (429) answers from Vision
    "backoffs",  # fleet back-offs set (a 429 of a request sent after the last back-off began)
    "wait_timeouts",  # requests that gave up waiting (VisionQuotaWaitError)
)


@dataclass(frozen=True, slots=True)
class QuotaKeys:
    sent: str
    sent_pages: str
    leases: str
    leased_pages: str
    backoff: str
    counters: str

    @classmethod
    def for_scope(cls, scope: str) -> QuotaKeys:
        base = f"{KEY_PREFIX}{{{scope}}}:"
        return cls(
            sent=f"{base}sent",
            sent_pages=f"{base}sent-pages",
            leases=f"{base}leases",
            leased_pages=f"{base}leased-pages",
            backoff=f"{base}backoff",
            counters=f"{base}counters",
        )


_COMMON = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function pages_of(member)
  return tonumber(string.match(member, ':(%d+)$'))
end
-- Drop the entries of a zset scored at or before `upto`, and their pages from its total.
local function expire(zset, total, upto)
  local gone = redis.call('ZRANGEBYSCORE', zset, '-inf', upto)
  if #gone == 0 then return end
  local pages = 0
  for _, member in ipairs(gone) do pages = pages + pages_of(member) end
  redis.call('ZREMRANGEBYSCORE', zset, '-inf', upto)
  redis.call('DECRBY', total, pages)
  if redis.call('ZCARD', zset) == 0 then redis.call('DEL', total) end
end
"""

# KEYS: sent, sent-pages, leases, leased-pages, backoff, counters
# ARGV: member, pages, requests per window, pages per window, window ms, pages in flight,
#       hold ms, waited ms (0: never refused), ttl ms, counters' ttl ms
# Returns {1, now} when granted; {0, wait ms, reason} when not (reason: backoff, rate, pages;
# wait 0: unknown, poll).
#
# A granted request's window entry is scored now + hold (its deadline and a grace) while it is in
# flight; RELEASE moves the score to the moment its answer came back. So a request stays in the
# window from its grant until one window after its answer: however long it travels, it reached
# Vision before that answer, and no window of arrivals at Vision holds more than the quota.
ACQUIRE = (
    _COMMON
    + """
local member, pages = ARGV[1], tonumber(ARGV[2])
local max_requests, max_pages = tonumber(ARGV[3]), tonumber(ARGV[4])
local window, in_flight, hold = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local waited, ttl, counters_ttl = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local now = now_ms()
local backoff_until = tonumber(redis.call('HGET', KEYS[5], 'until') or '0')
if backoff_until > now then return {0, backoff_until - now, 'backoff'} end
expire(KEYS[1], KEYS[2], now - window)
expire(KEYS[3], KEYS[4], now)
local count = redis.call('ZCARD', KEYS[1])
local sent_pages = tonumber(redis.call('GET', KEYS[2]) or '0')
if count + 1 > max_requests or sent_pages + pages > max_pages then
  -- the moment enough of the window's entries will have left it, oldest first
  local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  local need_requests, need_pages = count + 1 - max_requests, sent_pages + pages - max_pages
  local wait = window
  for i = 1, #entries, 2 do
    need_requests = need_requests - 1
    need_pages = need_pages - pages_of(entries[i])
    if need_requests <= 0 and need_pages <= 0 then
      wait = tonumber(entries[i + 1]) + window - now
      break
    end
  end
  return {0, math.max(wait, 1), 'rate'}
end
local leased = tonumber(redis.call('GET', KEYS[4]) or '0')
if leased + pages > in_flight then return {0, 0, 'pages'} end
redis.call('ZADD', KEYS[1], now + hold, member)
redis.call('INCRBY', KEYS[2], pages)
redis.call('ZADD', KEYS[3], now + hold, member)
redis.call('INCRBY', KEYS[4], pages)
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end
redis.call('HINCRBY', KEYS[6], 'requests', 1)
redis.call('HINCRBY', KEYS[6], 'pages', pages)
if waited > 0 then
  redis.call('HINCRBY', KEYS[6], 'throttled', 1)
  redis.call('HINCRBY', KEYS[6], 'waited_ms', waited)
end
redis.call('PEXPIRE', KEYS[6], counters_ttl)
return {1, now}
"""
)

# KEYS: sent, leases, leased-pages.  ARGV: member, pages.  Returns now.
# The request's window time starts now (its answer is back); its pages are no longer in flight.
RELEASE = (
    _COMMON
    + """
local now = now_ms()
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('DECRBY', KEYS[3], tonumber(ARGV[2]))
  if redis.call('ZCARD', KEYS[2]) == 0 then redis.call('DEL', KEYS[3]) end
end
return now
"""
)

# KEYS: backoff, counters.  ARGV: the 429'd request's grant time (ms), base ms, cap ms, shortening
# (the jitter drawn by the caller: 0 to JITTER).  Returns {back-off left ms, strikes, escalated}.
#
# A 429 of a request granted before the fleet's last back-off began is part of that episode: it
# counts, but changes nothing. Otherwise the back-off grows: base * 2^(strikes - 1), capped,
# shortened by the jitter; strikes start again after a quiet spell of one cap past the last one.
EXHAUSTED = (
    _COMMON
    + """
local sent_at, base, cap, shorten = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = now_ms()
redis.call('HINCRBY', KEYS[2], 'exhausted', 1)
local state = redis.call('HMGET', KEYS[1], 'until', 'set_at', 'strikes')
local backoff_until = tonumber(state[1] or '0')
local set_at, strikes = tonumber(state[2] or '0'), tonumber(state[3] or '0')
-- Granted no later than the back-off began (in its millisecond too: once it is set, nothing is
-- granted until it ends), so part of the episode it began with: it does not lengthen it.
if sent_at <= set_at then return {math.max(backoff_until - now, 0), strikes, 0} end
if now > backoff_until + cap then strikes = 0 end
strikes = strikes + 1
local delay = math.floor(math.min(cap, base * 2 ^ (strikes - 1)) * (1 - shorten))
local new_until = math.max(backoff_until, now + delay)
redis.call('HSET', KEYS[1], 'until', new_until, 'set_at', now, 'strikes', strikes)
redis.call('PEXPIRE', KEYS[1], new_until - now + cap)
redis.call('HINCRBY', KEYS[2], 'backoffs', 1)
return {new_until - now, strikes, 1}
"""
)
