-- crescent.home: where the library's files are, and reading them with the
-- C core's wording for file errors.
local M = {}

-- Directory holding lua/, configs/ (the repository or install root).
local function find_home()
    local p = package.searchpath("crescent.home", package.path)
    if p then
        local h = p:match("^(.*)/lua/crescent/home%.lua$")
        if h then return h end
    end
    return os.getenv("CRESCENT_ROOT") or "."
end
M.dir = find_home()

-- io.open's "PATH: reason" in the C core's wording: "PATH: cannot open: reason".
function M.open_error(path, err)
    local p = path .. ": "
    if err:sub(1, #p) == p then err = err:sub(#p + 1) end
    return p .. "cannot open: " .. err
end

-- Whole file, or nil, "PATH: cannot open: reason".
function M.read_file(path)
    local f, err = io.open(path, "rb")
    if not f then return nil, M.open_error(path, err) end
    local s = f:read("a")
    f:close()
    return s
end

-- path relative to the home directory when it is under it (for messages
-- and chunk names).
function M.display(path)
    local h = M.dir .. "/"
    if path:sub(1, #h) == h then return path:sub(#h + 1) end
    return path
end

-- A name ("bsp") is home/<subdir>/<name>.lua; anything with a "/" or ending
-- in .lua is a path.
function M.resolve(name, subdir)
    if name:find("/", 1, true) or name:match("%.lua$") then return name end
    return M.dir .. "/" .. subdir .. "/" .. name .. ".lua"
end

return M
