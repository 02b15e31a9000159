/**
 * `mulDivCeil` of `../carry-state.ts` in Lua 5.1, step for step: ⌈a · b / c⌉ for 0 < a < c, exact where a · b passes
 * 2^53 (every value it forms is an integer below 2^53). Its own constant so that a test can run it alone.
 */
export const MUL_DIV_CEIL_LUA = `
local function muldivceil(a, b, c)
  local q, r, bit, rest = 0, 0, 1, b
  while bit * 2 <= b do bit = bit * 2 end
  while bit >= 1 do
    if r >= c - r then q, r = 2 * q + 1, r - (c - r) else q, r = 2 * q, r + r end
    if rest >= bit then
      rest = rest - bit
      if r >= c - a then q, r = q + 1, r - (c - a) else r = r + a end
    end
    bit = bit / 2
  end
  if r > 0 then return q + 1 end
  return q
end
`;

/**
 * `nearer` of `../carry-state.ts` in Lua 5.1, step for step: whether window `a` is nearer `period` than `b` by ratio,
 * exactly where the cross products pass 2^53. math.fmod is C's fmod, exact on doubles by definition, as JavaScript's
 * `%` is (Lua 5.1's `%` is a − floor(a/b)·b, exact only by an argument about how a/b rounds). Its own constant so that
 * a test can run it alone.
 */
export const NEARER_LUA = `
local function ratiobelow(x1, y1, x2, y2)
  while true do
    local r1, r2 = math.fmod(x1, y1), math.fmod(x2, y2)
    local q1, q2 = (x1 - r1) / y1, (x2 - r2) / y2
    if q1 ~= q2 then return q1 < q2 end
    if r2 == 0 then return false end
    if r1 == 0 then return true end
    x1, y1, x2, y2 = y2, r2, y1, r1
  end
end
local function nearer(period, a, b)
  local ah, al, bh, bl = a, period, b, period
  if a < period then ah, al = period, a end
  if b < period then bh, bl = period, b end
  return ratiobelow(ah, al, bh, bl)
end
`;

/**
 * The GCRA check as a Redis Lua script: the same integer arithmetic as `../gcra.ts`, run atomically in
 * one round trip with three commands (TIME, GET, SET … PX). A TAT more than the tolerance ahead (a clock that
 * stepped back) is not capped: the refusal reports the whole wait, as gcra.ts does.
 *
 * KEYS[1] the key. ARGV[1] now in ms on the caller's clock: any integer, before the epoch too. ARGV[2] the policy set
 * id, `quota:period:burst` per limit joined by ",". ARGV[3] whose clock decides: `server` (TIME; ARGV[1] is then
 * ignored) or `caller` (ARGV[1], as given). The value is `<set id> <tatMs> <tatSub> …` (tatMs may be negative); a
 * value written for another set id carries over as
 * in `../carry-state.ts`. Each limit's ticks come from its numbers as in `tickUnits` (`../policy.ts`): 1/quota ms when
 * burst · period + quota fits below 2^53, else gcd(quota, period)/quota ms; Lua 5.1's `%` is not exact on doubles, so
 * the gcd takes its remainders with floordiv.
 * Reply: { allowed (1/0), remaining_1, reset_ms_1, remaining_2, reset_ms_2, … }.
 */
export const GCRA_SCRIPT = `${MUL_DIV_CEIL_LUA}${NEARER_LUA}
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
local function floordiv(a, b)
  local k = math.floor(a / b)
  if k * b > a then k = k - 1 elseif (k + 1) * b <= a then k = k + 1 end
  return k
end
local MAX = 9007199254740991
-- tickUnits (../policy.ts): ticks per ms (perms) and the emission interval in ticks; nil past 2^53 even reduced.
local function units(quota, period, burst)
  if burst * period + quota <= MAX then return quota, period end
  local a, b = quota, period
  while b ~= 0 do a, b = b, a - floordiv(a, b) * b end
  local perms, t = quota / a, period / a
  if burst * t + perms <= MAX then return perms, t end
  return nil
end
local tpm, itv = {}, {}
for i = 1, n do tpm[i], itv[i] = units(spec[3 * i - 2], spec[3 * i - 1], spec[3 * i]) end
local tat = {}
local stored = redis.call('GET', KEYS[1])
local sid, rest
if stored then sid, rest = string.match(stored, '^(%S+) (.*)$') end
if sid then
  local old = {}
  for number in string.gmatch(rest, '-?%d+') do old[#old + 1] = tonumber(number) end
  if sid == id then
    tat = old
  else
    -- carryState (../carry-state.ts): each limit takes the TAT of the stored limit with its window, else of the one
    -- left with the nearest window (by ratio, exactly: nearer), rounded up to a tick of its own (tpm), exactly
    -- (muldivceil).
    local ospec, otpm = {}, {}
    for number in string.gmatch(sid, '%d+') do ospec[#ospec + 1] = tonumber(number) end
    local known = true
    for j = 1, #ospec / 3 do
      otpm[j] = units(ospec[3 * j - 2], ospec[3 * j - 1], ospec[3 * j])
      if not otpm[j] then known = false end
    end
    -- No limit has numbers past even reduced ticks (gcraLimit refuses them): such a value starts afresh, as in
    -- carryState.
    if not known then old, ospec = {}, {} end
    local taken, source = {}, {}
    for j = 1, #ospec / 3 do taken[j] = old[2 * j - 1] == nil end
    for i = 1, n do
      for j = 1, #ospec / 3 do
        if not taken[j] and ospec[3 * j - 1] == spec[3 * i - 1] then
          taken[j], source[i] = true, j
          break
        end
      end
    end
    for i = 1, n do
      if not source[i] then
        local period, best = spec[3 * i - 1], nil
        for j = 1, #ospec / 3 do
          if not taken[j] then
            if not best or nearer(period, ospec[3 * j - 1], ospec[3 * best - 1]) then best = j end
          end
        end
        if best then taken[best], source[i] = true, best end
      end
    end
    for i = 1, n do
      local perms, j = tpm[i], source[i]
      tat[2 * i - 1], tat[2 * i] = now, 0
      if j then
        local ms, held = old[2 * j - 1], old[2 * j] or 0
        local sub = perms
        if held <= 0 then sub = 0 elseif held < otpm[j] then sub = muldivceil(held, perms, otpm[j]) end
        if sub >= perms then tat[2 * i - 1], tat[2 * i] = ms + 1, 0
        else tat[2 * i - 1], tat[2 * i] = ms, sub end
      end
    end
  end
end
local ahead = {}
local allowed = true
for i = 1, n do
  local perms, interval, burst = tpm[i], itv[i], spec[3 * i]
  local d = 0
  local ms, sub = tat[2 * i - 1], tat[2 * i]
  if ms and sub then
    local diff = ms - now
    if diff > 0 or (diff == 0 and sub > 0) then d = diff * perms + sub end
  end
  ahead[i] = d
  if d + interval > burst * interval then allowed = false end
end
local reply = { allowed and 1 or 0 }
local value = id
local ttl = 1
for i = 1, n do
  local perms, interval, burst = tpm[i], itv[i], spec[3 * i]
  local tolerance = burst * interval
  local d = ahead[i]
  if allowed then d = d + interval end
  local left = 0
  if d < tolerance then left = floordiv(tolerance - d, interval) end
  local reset = 0
  if left < burst then reset = floordiv(d - tolerance + (left + 1) * interval + perms - 1, perms) end
  -- Past 2^53 ticks ahead d is not exact: the ms kept apart, as farResetMs in ../gcra.ts.
  if d > MAX then
    local spare, far, sub = (burst - 1) * interval, tat[2 * i - 1] - now, tat[2 * i]
    if sub >= spare then reset = far + floordiv(sub - spare + perms - 1, perms)
    else reset = far - floordiv(spare - sub, perms) end
  end
  reply[2 * i] = left
  reply[2 * i + 1] = reset
  if allowed then
    local whole = floordiv(d, perms)
    value = value .. string.format(' %.0f %.0f', now + whole, d - whole * perms)
    local expires = floordiv(d + perms - 1, perms)
    if expires > ttl then ttl = expires end
  end
end
if allowed then redis.call('SET', KEYS[1], value, 'PX', ttl) end
return reply
`;
