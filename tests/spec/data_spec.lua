-- crescent.data: readers, writers and their error messages, from Lua.
local cr = require "crescent"
local data = cr.data
local core = cr.core.data

local dir
local function path(name) return dir .. "/" .. name end
local function put(name, text)
  local f = assert(io.open(path(name), "wb"))
  f:write(text)
  f:close()
  return path(name)
end

-- The message error() raised, and the line it was raised at (in this file).
local function raised(f, ...)
  local ok, msg = pcall(f, ...)
  assert.is_false(ok)
  return msg
end

setup(function()
  dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
end)

teardown(function() os.execute("rm -rf " .. dir) end)

describe("matrix_market", function()
  it("reads COO arrays with 0-based ids and caches them", function()
    local p = put("a.mmc", "%%MatrixMarket matrix coordinate real general\n% c\n3 4 2\n1 2 0.5\n3 4 -2\n")
    local m = data.matrix_market(p)
    assert.are.same({3, 4, 2, false}, {m.rows, m.cols, m.nnz, m.cached})
    assert.are.same({0, 2}, m.row:totable())
    assert.are.same({1, 3}, m.col:totable())
    assert.are.equal(-2, m.val:get(2, 1))
    local again = data.matrix_market(p)
    assert.is_true(again.cached)
    assert.are.same({1, 3}, again.col:totable())
    assert.is_false(data.matrix_market(p, { cache = false }).cached)
  end)

  it("round-trips through write_matrix_market", function()
    local m = data.matrix_market(put("b.mmc", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 3.25\n2 1 1e-5\n"))
    assert.is_true(data.write_matrix_market(path("c.mmc"), m))
    local back = data.matrix_market(path("c.mmc"), { cache = false })
    assert.are.same(m.row:totable(), back.row:totable())
    assert.are.equal(m.val:get(2, 1), back.val:get(2, 1))
  end)

  it("names the data file and line, positioned at the caller", function()
    local p = put("bad.mmc", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1\n")
    local line = debug.getinfo(1, "l").currentline + 1
    local msg = raised(function() local m = data.matrix_market(p); return m end)
    assert.are.equal(("data_spec.lua:%d: %s:3: column 3 out of range 1..2"):format(line, p),
                     msg:match("data_spec%.lua:.*"))
  end)

  it("returns nil, msg from the core binding", function()
    local r, msg = core.matrix_market(path("missing.mmc"))
    assert.is_nil(r)
    assert.are.equal(path("missing.mmc") .. ": cannot open: No such file or directory", msg)
  end)

  it("rejects unknown options", function()
    assert.has_error(function() data.matrix_market(path("a.mmc"), { cahce = true }) end)
  end)
end)

describe("libsvm", function()
  it("reads CSR and round-trips", function()
    local m = data.libsvm(put("a.svm", "1 1:0.5 3:2\n-1\n0 2:4 # c\n"))
    assert.are.same({3, 3, 3}, {m.rows, m.cols, m.nnz})
    assert.are.same({0, 2, 2, 3}, m.ptr:totable())
    assert.are.same({0, 2, 1}, m.idx:totable())
    assert.are.equal(-1, m.label:get(2, 1))
    assert.is_true(data.write_libsvm(path("b.svm"), m))
    local b = data.libsvm(path("b.svm"), { features = 5 })
    assert.are.equal(5, b.cols)
    assert.are.same(m.idx:totable(), b.idx:totable())
    assert.are.equal(4, b.val:get(3, 1))
  end)

  it("reports bad lines", function()
    local msg = raised(data.libsvm, put("bad.svm", "1 1:1\n1 2:x\n"))
    assert.truthy(msg:find("bad.svm:2: value of feature 2 is not a number", 1, true))
  end)
end)

describe("edges", function()
  it("reads and round-trips", function()
    local g = data.edges(put("g.txt", "# c\n0 4\n2 1\n"))
    assert.are.same({5, 2}, {g.n, g.m})
    assert.are.same({0, 2}, g.src:totable())
    assert.is_true(data.write_edges(path("g2.txt"), g))
    assert.are.same({4, 1}, data.edges(path("g2.txt")).dst:totable())
  end)

  it("reports huge ids", function()
    local msg = raised(data.edges, put("bad.txt", "1 99999999999\n"))
    assert.truthy(msg:find("bad.txt:1: target id 99999999999 out of range", 1, true))
  end)
end)

describe("triples", function()
  it("shares dictionaries between train and test", function()
    local tr = data.triples(put("train.txt", "a\tr\tb\nb\tq\tc\n"))
    assert.are.same({2, 3, 2}, {tr.n, tr.n_ent, tr.n_rel})
    assert.are.equal(2, tr.entities:id("c"))
    assert.are.equal("q", tr.relations:name(1))
    assert.are.equal(3, #tr.entities)
    local te = data.triples(put("test.txt", "c\tr\ta\n"), { entities = tr.entities, relations = tr.relations })
    assert.are.same({2, 0, 0}, {te.s:get(1), te.r:get(1), te.o:get(1)})
    local msg = raised(data.triples, put("bad.txt", "c\tzz\ta\n"), { entities = tr.entities, relations = tr.relations })
    assert.truthy(msg:find("bad.txt:1: unknown relation 'zz'", 1, true))
  end)

  it("reads LibKGE .del ids with dictionary files", function()
    local tr = data.triples(put("t.txt", "a\tr\tb\n"))
    tr.entities:write(path("entity_ids.del"))
    tr.relations:write(path("relation_ids.del"))
    assert.is_true(data.write_triples(path("train.del"), tr, { names = false }))
    local d = data.triples(path("train.del"), { entities = path("entity_ids.del"), relations = path("relation_ids.del") })
    assert.are.same({1, 2, 1}, {d.n, d.n_ent, d.n_rel})
    assert.are.equal("b", d.entities:name(d.o:get(1)))
    local msg = raised(data.triples, put("bad.del", "0\t0\t2\n"), { entities = path("entity_ids.del") })
    assert.truthy(msg:find("bad.del:1: object id 2 out of range 0..1", 1, true))
  end)
end)

describe("text", function()
  it("builds the vocabulary, tables and sentences", function()
    local c = data.text(put("t.txt", "a b a\nc a\n\nb\n"), { min_count = 2, sample = 1e-3, table_size = 100 })
    assert.are.same({2, 5, 6, 3}, {c.words, c.total, c.raw, c.nsent})
    assert.are.same({"a", "b"}, c.vocab:names())
    assert.are.same({3, 2}, c.counts:totable())
    assert.are.same({0, 1, 0, 0, 1}, c.tokens:totable())
    assert.are.same({0, 3, 4, 5}, c.sentences:totable())
    assert.are.equal(100, #c.table)
    assert.are.equal(0, c.table:get(1))
    assert.are.equal(1, c.table:get(100))
    assert.is_true(c.keep:get(1, 1) <= 1)
    assert.is_true(data.write_text(path("t2.txt"), c))
    assert.are.same(c.tokens:totable(), data.text(path("t2.txt")).tokens:totable())
  end)

  it("rejects an empty file", function()
    local msg = raised(data.text, put("e.txt", "\n"))
    assert.truthy(msg:find("e.txt: empty file", 1, true))
  end)
end)

describe("text with a fixed vocabulary", function()
  it("maps held-out text through the training vocabulary and splits long lines", function()
    local tr = data.text(put("tr.txt", "a b c a b a\n"))
    local ho = data.text(put("ho.txt", "c zz a\nzz\nb b\n"), { vocab = tr.vocab })
    assert.are.equal(3, #tr.vocab)
    assert.are.same({2, 0, 1, 1}, ho.tokens:totable())
    assert.are.same({1, 2, 1}, ho.counts:totable())
    local sp = data.text(path("tr.txt"), { max_sentence = 4 })
    assert.are.same({0, 4, 6}, sp.sentences:totable())
  end)
end)

describe("argument errors", function()
  it("are positioned at the caller's line, not inside crescent", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local msg = raised(function() local m = data.matrix_market(path("a.mmc"), { cahce = true }); return m end)
    assert.are.equal(("data_spec.lua:%d: unknown option 'cahce'"):format(line), msg:match("data_spec%.lua:.*"))
    local u = cr.core.util
    msg = raised(data.write_matrix_market, path("x.mmc"), { rows = 2, cols = 2, row = u.ints{0, 5}, col = u.ints{0, 1} }, true)
    assert.truthy(msg:find("entry 2: (5, 1) outside 2 x 2", 1, true))
  end)

  it("write_matrix_market writes a pattern file without values", function()
    local u = cr.core.util
    assert.is_true(data.write_matrix_market(path("p.mmc"), { rows = 2, cols = 3, row = u.ints{0, 1}, col = u.ints{2, 0} }, true))
    local m = data.matrix_market(path("p.mmc"), { cache = false })
    assert.are.same({2, 3, 2}, {m.rows, m.cols, m.nnz})
    assert.are.same({2, 0}, m.col:totable())
    assert.are.equal(1, m.val:get(2, 1))
  end)
end)

describe("writers validate what they are given", function()
  local u
  setup(function() u = cr.core.util end)
  it("rejects ids the readers would refuse", function()
    assert.truthy(raised(data.write_edges, path("e.txt"), { src = u.ints{0, -1}, dst = u.ints{1, 2} })
      :find("edge 2 has an id outside", 1, true))
    assert.truthy(raised(data.write_triples, path("t.del"), { s = u.ints{0}, r = u.ints{-1}, o = u.ints{0} })
      :find("triple 1 has a negative id", 1, true))
    assert.truthy(raised(data.write_libsvm, path("l.svm"),
      { ptr = u.ints{0, 2}, idx = u.ints{3, 1}, val = u.matrix(2, 1), label = u.matrix(1, 1) })
      :find("row 1: feature ids must increase", 1, true))
    assert.truthy(raised(data.write_libsvm, path("l.svm"),
      { ptr = u.ints{0, 3}, idx = u.ints{1, 2}, val = u.matrix(2, 1), label = u.matrix(1, 1) })
      :find("inconsistent CSR", 1, true))
  end)
end)

describe("mm_open", function()
  it("reads a MatrixMarket file in chunks", function()
    local p = put("ch.mmc", "%%MatrixMarket matrix coordinate real general\n5 5 5\n1 1 1\n2 2 2\n3 3 3\n4 4 4\n5 5 5\n")
    local r <close> = data.mm_open(p)
    assert.are.same({5, 5, 5}, {r:header()})
    local seen = {}
    while true do
      local row, col, val = r:next(2)
      if not row then break end
      assert.are.equal(#row, val:rows())
      for i = 1, #row do seen[#seen + 1] = row:get(i) + val:get(i, 1) * 10 end
    end
    assert.are.same({10, 21, 32, 43, 54}, seen)
  end)

  it("returns nil, msg on a bad line, then stops", function()
    local r = cr.core.data.mm_open(put("ch2.mmc", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 9 1\n"))
    local row, msg = r:next(10)
    assert.is_nil(row)
    assert.truthy(msg:find("ch2.mmc:4: column 9 out of range 1..2", 1, true))
    assert.is_nil(r:next(10))
  end)
end)
