-- The ```sh / ```lua blocks of README.md and docs/*.md that docs_examples.sh
-- does NOT run, each with the reason it cannot run here. Every other such
-- block must carry a <!-- doc-test: ... --> tag (docs_extract.lua), or the
-- test fails; an entry here that matches no block fails it too.
-- A block is named by its page and its first non-blank line (trimmed).
-- Keep this list short: before adding a block, try a tag with a
-- <!-- doc-test-setup: ... --> line that makes the files it needs.
return {
  ["README.md"] = {
    { "make demo   # installs the Debian packages it needs, builds, generates a",
      "builds the tree, generates the 1M-cell matrix and trains on it (minutes); make test would recurse" },
    { "local M = {}",
      "a sketch of a model: my_batches and compute_gradient stand for the user's code" },
    { "crescent run examples/kge.lua -- model=distmult dim=100 epochs=20",
      "trains on the real datasets of `make data` (minutes); tests/integration/kge_*.sh and w2v_*.sh run both examples end to end on small data" },
    { "> job:stats().max_gap",
      "a REPL transcript with prompts; the same session runs in docs/repl.md (repl blocks)" },
  },
  ["docs/checkpoints.md"] = {
    { "job:save(\"run1.ckpt\")      -- between epochs",
      "a fragment (no job is made); the complete save/resume script is the train.lua example below" },
  },
  ["docs/datasets.md"] = {
    { "local cr = require \"crescent\"",
      "reads the real datasets of `make data` (WordNet, GCIDE, Brown: minutes to build); tests/integration/corpus_real.sh builds and reads them" },
  },
  ["docs/evaluation.md"] = {
    -- API reference: placeholders (E, R, test, vectors, NWK, "[, opts]") a reader fills in;
    -- each call is pinned by tests/spec/eval_spec.lua and the test_eval_* C tests
    { "local r = cr.eval.link_prediction{", "API reference with placeholders (E, R, test, train, valid)" },
    { "local r = cr.eval.analogy(vectors, words, \"../shared/data/analogy/questions-words.txt\",",
      "API reference: placeholders and a data set outside the repository" },
    { "local r = cr.eval.synonyms(vectors, words, \"synonyms.tsv\" [, {restrict = n}])",
      "a signature with an optional argument in brackets (not Lua)" },
    { "cr.eval.rmse(pred, truth)", "a list of signatures (placeholders)" },
    { "local ll = cr.eval.lda_loglik{n_wk = NWK, n_dk = NDK, n_k = NK, alpha = 0.1, beta = 0.01}",
      "API reference with placeholders (NWK, NDK, NK)" },
    { "local p = cr.eval.lda_perplexity{n_wk = NWK, alpha = 0.1, beta = 0.01,",
      "API reference with placeholders (NWK, ids1, ...)" },
  },
  ["docs/getting-started.md"] = {
    { "make deps    # apt-get install the missing packages (once)",
      "builds, tests and installs the tree itself: run from make test it would recurse; install is tests/integration/install.sh" },
    { "crescent keygen          # public ...  /  secret ...",
      "'...' stands for the printed keys; keygen and CURVE keys are tested by ps_manual_join.sh and test_wire" },
  },
  ["docs/job-scripts.md"] = {
    { "job:model(\"mf\", { train = \"data/mf/train.mmc\", lambda = 0.02 })",
      "a fragment of the MF job (needs tables W and H); the whole job is examples/mf.lua, run by getting-started.md" },
    { "local r = job:epoch{ lr = 0.02, epoch = 1, total = 900000 }",
      "a fragment of the MF job; the whole job is examples/mf.lua, run by getting-started.md" },
  },
  ["docs/models.md"] = {
    { "local M = {}", "the skeleton of a model script (empty functions); the complete model below runs" },
  },
  ["docs/policies.md"] = {
    { "crescent run job.lua --policy bsp",
      "job.lua and ./mypolicy.lua stand for the reader's files; the same options run in policies.md's job below and ps_policies.sh" },
    { "job:policy(\"asp\")",
      "a fragment (no job is made; ./mypolicy.lua is the reader's); job:policy runs in the example job below and in ps_policies.sh" },
    { "-- may_proceed(my_clock, min_clock, clocks) -> boolean",
      "comments only: the signature of may_proceed" },
  },
  ["docs/cluster.md"] = {
    -- each needs a cluster (hosts, a launcher); tests/cluster/test_launchers.sh and test_ssh.sh run the same
    -- commands on three emulated hosts, with each launcher's variables as it sets them
    { "crescent keygen > ~/.crescent-key && chmod 600 ~/.crescent-key", "writes into the reader's home; launch_errors.sh makes and checks key files" },
    { "srun -N 4 --ntasks-per-node=1 --export=ALL,CRESCENT_KEY_FILE=$HOME/.crescent-key \\", "needs a Slurm cluster; test_launchers.sh sets Slurm's variables" },
    { "mpirun -np 4 -H a,b,c,d -x CRESCENT_MASTER=a -x CRESCENT_PORT=29400 \\", "needs hosts a-d; test_launchers.sh runs a real mpirun on emulated hosts" },
    { "cat > hosts <<'EOF'", "needs ssh to hosts a-c; test_ssh.sh runs crescent launch against a real sshd on emulated hosts" },
    { "dmlc-submit --cluster ssh --host-file hosts --num-servers 4 --num-workers 0 crescent run job.lua", "needs dmlc-core's tracker; test_launchers.sh sets its variables" },
    { "torchrun --nnodes 4 --nproc-per-node 1 --node-rank $NODE_RANK --master-addr a --master-port 29400 \\", "needs torchrun and hosts; test_launchers.sh sets its variables" },
    { "crescent run job.lua --nodes 3 --external-nodes --listen tcp://10.1.0.11:29400 --key key   # on host a", "needs hosts; ps_manual_join.sh starts nodes by hand on loopback" },
  },
  ["docs/repl.md"] = {
    { "crescent repl                       # a prompt with cr = require \"crescent\"",
      "interactive (a terminal); job.lua stands for the reader's script; the piped repl examples below and repl_tty.sh run it" },
  },
}
