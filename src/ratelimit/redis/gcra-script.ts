/**
 * The GCRA check as a Redis Lua script: the same integer arithmetic as `../gcra.ts`, run atomically in
 * one round trip with three commands (TIME, GET, SET … PX). A TAT more than the tolerance ahead (a clock that
 * stepped back) is not capped: the refusal reports the whole wait, as gcra.ts does.
 *
 * KEYS[1] the key. ARGV[1] now in ms on the caller's clock: any integer, before the epoch too. ARGV[2] the policy set
 * id, `quota:period:burst` per limit joined by ",". ARGV[3] whose clock decides: `server` (TIME; ARGV[1] is then
 * ignored) or `caller` (ARGV[1], as given). The value is `<set id> <tatMs> <tatSub> …` (tatMs may be negative); a
 * value written for another set id is ignored (a changed policy starts afresh).
 * Reply: { allowed (1/0), remaining_1, reset_ms_1, remaining_2, reset_ms_2, … }.
 */
export const GCRA_SCRIPT = `
local now
if ARGV[3] == 'server' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
local id = ARGV[2]
local spec = {}
for number in string.gmatch(id, '%d+') do spec[#spec + 1] = tonumber(number) end
local n = #spec / 3
local tat = {}
local stored = redis.call('GET', KEYS[1])
if stored and string.sub(stored, 1, #id + 1) == id .. ' ' then
  for number in string.gmatch(string.sub(stored, #id + 2), '-?%d+') do tat[#tat + 1] = tonumber(number) end
end
local function floordiv(a, b)
  local k = math.floor(a / b)
  if k * b > a then k = k - 1 elseif (k + 1) * b <= a then k = k + 1 end
  return k
end
local ahead = {}
local allowed = true
for i = 1, n do
  local quota, period, burst = spec[3 * i - 2], spec[3 * i - 1], spec[3 * i]
  local d = 0
  local ms, sub = tat[2 * i - 1], tat[2 * i]
  if ms and sub then
    local diff = ms - now
    if diff > 0 or (diff == 0 and sub > 0) then d = diff * quota + sub end
  end
  ahead[i] = d
  if d + period > burst * period then allowed = false end
end
local reply = { allowed and 1 or 0 }
local value = id
local ttl = 1
for i = 1, n do
  local quota, period, burst = spec[3 * i - 2], spec[3 * i - 1], spec[3 * i]
  local tolerance = burst * period
  local d = ahead[i]
  if allowed then d = d + period end
  local left = 0
  if d < tolerance then left = floordiv(tolerance - d, period) end
  local reset = 0
  if left < burst then reset = floordiv(d - tolerance + (left + 1) * period + quota - 1, quota) end
  reply[2 * i] = left
  reply[2 * i + 1] = reset
  if allowed then
    local whole = floordiv(d, quota)
    value = value .. string.format(' %.0f %.0f', now + whole, d - whole * quota)
    local expires = floordiv(d + quota - 1, quota)
    if expires > ttl then ttl = expires end
  end
end
if allowed then redis.call('SET', KEYS[1], value, 'PX', ttl) end
return reply
`;
