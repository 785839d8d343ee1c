"""Traced programs run on the simulator: `nctlm run -t kernel -w out.json` loads them, runs every
instruction the loops expand to, and names the kernel's source lines in its trace."""

import json
import os
import subprocess
import unittest

import support

REPO = os.path.abspath(os.path.join(support.PYTHON_DIR, ".."))
NCTLM = os.environ.get("NCTLM") or os.path.join(REPO, "build", "bin", "nctlm")

# (file, kernel, --arg..., grid, platform)
KERNELS = [
    ("scaled_softmax.py", "scaled_softmax", ["x=bf16[512,1024]", "scale=0.125"], "1", "trn1"),
    ("rmsnorm.py", "rmsnorm", ["a=bf16[300,512]", "g=bf16[512]"], "1", "trn2"),
    ("layernorm.py", "layernorm", ["x=fp32[256,384]", "gamma=fp32[384]", "beta=fp32[384]"], "1", "trn1"),
    ("add.py", "add", ["a=bf16[1024,256]", "b=bf16[1024,256]"], "2", "trn2"),
    ("matmul.py", "matmul_tiled", ["lhsT=bf16[512,256]", "rhs=bf16[512,1024]"], "1", "trn1"),
    ("matmul.py", "matmul_blocked", ["lhsT=bf16[512,512]", "rhs=bf16[512,2048]"], "1", "trn2"),
]


def lines(body):
    return {i["line"] for i in support.instructions(body)}


class RunsOnTheSimulator(unittest.TestCase):
    def test_traced_kernels_run_every_instruction_and_name_their_lines(self):
        self.assertTrue(os.access(NCTLM, os.X_OK), f"no nctlm binary at {NCTLM} (set NCTLM)")
        for name, fn, args, grid, platform in KERNELS:
            with self.subTest(kernel=fn, platform=platform):
                doc, _, _ = support.trace(support.kernel_path(name), fn, *args, grid=grid)
                base = os.path.join(support._tmp.name, f"{fn}-{platform}")
                with open(base + ".json", "w") as f:
                    json.dump(doc, f)
                run = subprocess.run([NCTLM, "run", "-p", platform, "-t", "kernel", "-w", base + ".json",
                                      "-o", base + ".stats.json", "--trace", base + ".trace.json"],
                                     capture_output=True, text=True)
                self.assertEqual(run.returncode, 0, run.stderr)
                with open(base + ".stats.json") as f:
                    results = json.load(f)["results"]
                self.assertEqual(results["kernel"], fn)
                self.assertGreater(results["sim_time_ns"], 0)
                self.assertEqual(results["grid"], int(grid))
                ops = support.expanded_ops(doc)
                self.assertEqual(results["instructions_by_op"], dict(ops))
                self.assertEqual(results["instructions"], sum(ops.values()))
                with open(base + ".trace.json") as f:
                    events = json.load(f)["traceEvents"]
                sources = {e["args"]["source"] for e in events if "source" in e.get("args", {})}
                self.assertEqual(sources, lines(doc["body"]))


if __name__ == "__main__":
    unittest.main()
