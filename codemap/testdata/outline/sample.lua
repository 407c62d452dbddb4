-- Sample for the Lua outline.
local M = {}

local function helper(x)
  return x * 2
end

function M.greet(name)
  return "hello " .. name
end

function M:method()
  return self
end

function global_fn()
  local function inner()
    return 1
  end
  return inner()
end

M.assigned = function(a)
  return a
end

local square = function(x)
  return x * x
end

return M
