-- Options tables read against cr_opt rows (src/lua/l_opt.c): the bindings
-- check keys, types and ranges in one place, with one message shape
-- ("'key' must be WANT (got V)"), and the rows of cr.partition are the
-- ones `crescent partition` reads.
local cr = require "crescent"
local core = cr.core
local P = cr.partition

local paper = { u = {0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, v = {0, 1, 0, 1, 2, 2, 3, 4, 5, 2, 3, 4, 5} }

local errors = require "spec_errors"
local err_of, has = errors.err_of, errors.has

describe("options tables", function()
  it("refuse unknown keys, naming them (non-string keys too)", function()
    has("mf_load: unknown option 'nrows'", err_of(core.kernels.mf_load, "x.mmc", { nrows = 1 }))
    has("unknown option '1'", err_of(core.data.libsvm, "x.svm", { 5 }))
    has("unknown partition option 'init-blocks'",
      err_of(P, { graph = P.graph(paper), k = 2, method = "parsa", ["init-blocks"] = 1 }))
  end)

  it("check types and ranges with the range in the message", function()
    local g = P.graph(paper)
    has("partition option 'blocks' must be an integer in [1, 1048576] (got 0)",
      err_of(P, { graph = g, k = 2, method = "parsa", blocks = 0 }))
    has("partition option 'global_sample' must be a number in [0, 1] (got 2)",
      err_of(P, { graph = g, k = 2, method = "parsa", global_sample = 2 }))
    has("partition option 'select' must be one of examples, neighbours, neighbors (got all)",
      err_of(P, { graph = g, k = 2, method = "parsa", select = "all" }))
    has("mf_load: 'parts' must be an integer in [1, 2147483647] (got 1.5)",
      err_of(core.kernels.mf_load, "x.mmc", { parts = 1.5 }))
    has("'cache' must be a boolean (got yes)", err_of(core.data.matrix_market, "x.mmc", { cache = "yes" }))
    has("'min_count' must be an integer >= 1 (got 0)", err_of(core.data.text, "x.txt", { min_count = 0 }))
    has("lda_loglik: 'alpha' is required",
      err_of(core.eval.lda_loglik, { n_wk = core.util.matrix(2, 2), beta = 0.1 }))
  end)

  it("accept the same values as before: integral floats, booleans or numbers for flags", function()
    local g = P.graph(paper)
    local a = P{ graph = g, k = 2, method = "parsa", seed = 3.0, sample = 1, select = "neighbors" }
    local b = P{ graph = g, k = 2, method = "parsa", seed = 3, sample = true, select_neighbours = 1 }
    assert.are.same(a.v:totable(), b.v:totable())
  end)
end)
