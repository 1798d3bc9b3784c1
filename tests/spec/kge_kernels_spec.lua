-- crescent.core.kernels kge_step and kge_score_all: argument checks with
-- the messages a model script's author sees, the loss and gradients against
-- a hand computation, and a few SGD steps through the binding.
local crescent = require "crescent"
local K, util = crescent.core.kernels, crescent.core.util

local MODELS = { "complex", "distmult", "transe", "transe_l1", "transe_l2", "rescal" }

local errors = require "spec_errors"
local err_of, has = errors.err_of, errors.has

-- Entity and relation matrices with deterministic small values.
local function params(model, ne, nr, d)
  local E = util.matrix(ne, d)
  local R = util.matrix(nr, model == "rescal" and d * d or d)
  local x = 7
  local function nxt() x = (x * 1103515245 + 12345) % 2147483648; return (x / 2147483648 - 0.5) * 0.6 end
  for i = 1, ne do for k = 1, d do E:set(i, k, nxt()) end end
  for i = 1, nr do for k = 1, R:cols() do R:set(i, k, nxt()) end end
  return E, R
end

local function zeros_like(M) return util.matrix(M:rows(), M:cols()) end

describe("crescent.core.kernels kge", function()
  local E, R = params("distmult", 4, 2, 4)
  local batch = { s = { 0, 1 }, r = { 0, 1 }, o = { 2, 3 }, y = { 1, 0 } }

  it("refuses an unknown model by name, with the list of models", function()
    local e = err_of(K.kge_step, "complx", E, R, nil, nil, batch)
    has("kge_step: unknown model 'complx' (complex, distmult, transe_l1, transe_l2, rescal)", e)
    has("kge_score_all: unknown model 'holE'", err_of(K.kge_score_all, "holE", E, R, { 0 }, { 0 }))
  end)

  it("checks shapes, indices, labels and the batch's fields", function()
    local R9 = util.matrix(2, 9)
    has("kge_step: relation rows have 9 columns, expected 4 (the entity dimension)",
        err_of(K.kge_step, "distmult", E, R9, nil, nil, batch))
    has("expected 16 (d*d for rescal)", err_of(K.kge_step, "rescal", E, R, nil, nil, batch))
    local E3 = util.matrix(4, 3)
    has("complex: entity dimension 3 is odd", err_of(K.kge_step, "complex", E3, util.matrix(2, 3), nil, nil, batch))
    has("kge_step: gE is 3 x 4, its parameters are 4 x 4",
        err_of(K.kge_step, "distmult", E, R, util.matrix(3, 4), zeros_like(R), batch))
    has("kge_step: triple 2: entity row 4 out of range [0, 4)",
        err_of(K.kge_step, "distmult", E, R, nil, nil, { s = { 0, 1 }, r = { 0, 1 }, o = { 2, 4 }, y = { 1, 0 } }))
    has("kge_step: triple 1: relation row 2 out of range [0, 2)",
        err_of(K.kge_step, "distmult", E, R, nil, nil, { s = { 0 }, r = { 2 }, o = { 1 }, y = { 1 } }))
    has("kge_step: triple 1: label 3 is not in [0, 1]",
        err_of(K.kge_step, "distmult", E, R, nil, nil, { s = { 0 }, r = { 0 }, o = { 1 }, y = { 3 } }))
    has("kge_step: batch columns differ in length (s 2, r 1, o 2)",
        err_of(K.kge_step, "distmult", E, R, nil, nil, { s = { 0, 1 }, r = { 0 }, o = { 1, 2 }, y = { 1, 0 } }))
    has("kge_step: y has 1 labels, the batch has 2 triples",
        err_of(K.kge_step, "distmult", E, R, nil, nil, { s = { 0, 1 }, r = { 0, 0 }, o = { 1, 2 }, y = { 1 } }))
    has("kge_step: batch field 'y' is required",
        err_of(K.kge_step, "distmult", E, R, nil, nil, { s = { 0 }, r = { 0 }, o = { 1 } }))
    has("kge_step: unknown batch field 'label'",
        err_of(K.kge_step, "distmult", E, R, nil, nil, { s = { 0 }, r = { 0 }, o = { 1 }, y = { 1 }, label = 1 }))
    has("kge_step: s must be crescent.Ints or a table of integers (got string)",
        err_of(K.kge_step, "distmult", E, R, nil, nil, { s = "0", r = { 0 }, o = { 1 }, y = { 1 } }))
    has("kge_step: unknown option 'l2'", err_of(K.kge_step, "distmult", E, R, nil, nil, batch, { l2 = 1 }))
    has("kge_step: 'lambda' must be", err_of(K.kge_step, "distmult", E, R, nil, nil, batch, { lambda = -1 }))
    has("kge_score_all: query 2: entity row 9 out of range [0, 4)",
        err_of(K.kge_score_all, "distmult", E, R, { 0, 9 }, { 0, 0 }))
    has("kge_score_all: 2 anchors and 1 relations", err_of(K.kge_score_all, "distmult", E, R, { 0, 1 }, { 0 }))
    has("kge_score_all: 'dir' must be one of tail, head",
        err_of(K.kge_score_all, "distmult", E, R, { 0 }, { 0 }, { dir = "up" }))
    has("kge_score_all: out must be a 1 x 4 crescent.Matrix",
        err_of(K.kge_score_all, "distmult", E, R, { 0 }, { 0 }, { out = util.matrix(2, 4) }))
  end)

  it("computes the logistic loss, the L2 term and the gradient of DistMult by hand", function()
    local e = util.matrix(2, 2)
    e:set(1, 1, 1); e:set(1, 2, 2); e:set(2, 1, 3); e:set(2, 2, -1)
    local r = util.matrix(1, 2)
    r:set(1, 1, 0.5); r:set(1, 2, 0.25)
    local gE, gR = zeros_like(e), zeros_like(r)
    -- f = 1*0.5*3 + 2*0.25*(-1) = 1; label 1: loss log(1 + e^-1), dl/df = sigmoid(1) - 1
    local loss, reg, n = K.kge_step("distmult", e, r, gE, gR,
                                    { s = util.ints { 0 }, r = util.ints { 0 }, o = util.ints { 1 }, y = { 1 } },
                                    { lambda = 0.1 })
    assert.are.equal(1, n)
    assert.is_true(math.abs(loss - math.log(1 + math.exp(-1))) < 1e-6)
    assert.is_true(math.abs(reg - 0.1 * (5 + 0.3125 + 10)) < 1e-6)
    local c = 1 / (1 + math.exp(-1)) - 1
    local want_s = { c * 0.5 * 3 + 0.2 * 1, c * 0.25 * -1 + 0.2 * 2 }
    local want_o = { c * 1 * 0.5 + 0.2 * 3, c * 2 * 0.25 + 0.2 * -1 }
    for k = 1, 2 do
      assert.is_true(math.abs(gE:get(1, k) - want_s[k]) < 1e-6)
      assert.is_true(math.abs(gE:get(2, k) - want_o[k]) < 1e-6)
    end
    -- called again, the gradient adds up (and a Matrix of labels works too)
    local y = util.matrix(1, 1)
    y:set(1, 1, 1)
    K.kge_step("distmult", e, r, gE, gR, { s = { 0 }, r = { 0 }, o = { 1 }, y = y }, { lambda = 0.1 })
    assert.is_true(math.abs(gE:get(1, 1) - 2 * want_s[1]) < 1e-6)
  end)

  it("scores every entity as the loss sees it, in both directions", function()
    for _, model in ipairs(MODELS) do
      local Em, Rm = params(model, 5, 2, 4)
      for _, dir in ipairs { "tail", "head" } do
        local S = K.kge_score_all(model, Em, Rm, { 0, 3 }, { 1, 0 }, { dir = dir })
        assert.are.equal(2, S:rows())
        assert.are.equal(5, S:cols())
        local again = K.kge_score_all(model, Em, Rm, { 0, 3 }, { 1, 0 }, { dir = dir, out = S })
        assert.are.equal(S, again)
        -- the score's logistic loss as a negative is log(1 + e^f): recover f
        local q = { { 0, 1 }, { 3, 0 } }
        for i = 1, 2 do
          for x = 0, 4 do
            local s, o = q[i][1], x
            if dir == "head" then s, o = x, q[i][1] end
            local l = K.kge_step(model, Em, Rm, nil, nil, { s = { s }, r = { q[i][2] }, o = { o }, y = { 0 } })
            local f = math.log(math.exp(l) - 1)
            assert.is_true(math.abs(S:get(i, x + 1) - f) < 1e-4, model .. " " .. dir)
          end
        end
      end
    end
  end)

  it("lowers the loss over a few SGD steps for every model", function()
    for _, model in ipairs(MODELS) do
      local Em, Rm = params(model, 6, 1, 6)
      local b = { s = { 0, 1, 2, 3, 4, 0, 1, 2, 3, 4 }, r = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
                  o = { 1, 2, 3, 4, 5, 3, 4, 5, 0, 1 }, y = { 1, 1, 1, 1, 1, 0, 0, 0, 0, 0 } }
      local first, last
      for step = 1, 60 do
        local gE, gR = zeros_like(Em), zeros_like(Rm)
        local loss = K.kge_step(model, Em, Rm, gE, gR, b, { lambda = 1e-4 })
        first = first or loss
        last = loss
        for i = 1, Em:rows() do for k = 1, Em:cols() do Em:set(i, k, Em:get(i, k) - 0.1 * gE:get(i, k)) end end
        for i = 1, Rm:rows() do for k = 1, Rm:cols() do Rm:set(i, k, Rm:get(i, k) - 0.1 * gR:get(i, k)) end end
      end
      assert.is_true(last < 0.8 * first, ("%s: loss %g -> %g"):format(model, first, last))
    end
  end)
end)
