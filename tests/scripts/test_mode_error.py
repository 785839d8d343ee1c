#!/usr/bin/env python3
"""scripts/mode-error's comparison logic without a simulator: a headline key missing from a result
(e.g. after a rename: 0.2's `wall_ns` is 0.3's `sim_time_ns`) fails the case and --check, never
reads as a 0 % error."""
import importlib.machinery
import importlib.util
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_loader = importlib.machinery.SourceFileLoader("mode_error", os.path.join(ROOT, "scripts", "mode-error"))
_spec = importlib.util.spec_from_loader("mode_error", _loader)
me = importlib.util.module_from_spec(_spec)
_loader.exec_module(me)


def run(results, host_time_s=1.0):
    return {"exit": 0, "results": results, "host_time_s": host_time_s, "stderr": []}


def rows_for(c, at, other, mode="flow"):
    return [{"case": c, "mode": mode, "at": at, "other": other, "cmp": me.compare(c, at, other)}]


class MissingHeadline(unittest.TestCase):
    def setUp(self):
        self.gqa = me.case("gqa_g1_llama31_8b_8k trn2", "trn2", "gqa", "gqa_g1_llama31_8b_8k", tags=["shipped"])

    def test_matching_headline_is_compared(self):
        cmp = me.compare(self.gqa, run({"sim_time_ns": 1000.0}), run({"sim_time_ns": 1100.0}, 0.1))
        self.assertAlmostEqual(cmp["headline"], 0.10)
        self.assertEqual(cmp["headline_key"], "sim_time_ns")
        self.assertAlmostEqual(cmp["speedup"], 10.0)
        bad = me.check(rows_for(self.gqa, run({"sim_time_ns": 1000.0}), run({"sim_time_ns": 1100.0})), ["flow"])
        self.assertEqual(len(bad), 0)  # 10 % is inside flow's gqa bound (18 %)
        bad = me.check(rows_for(self.gqa, run({"sim_time_ns": 1000.0}), run({"sim_time_ns": 1500.0})), ["flow"])
        self.assertEqual(len(bad), 1)
        self.assertIn("beyond its bound", bad[0])

    def test_key_missing_from_both_fails(self):
        # Results that only carry an old name: before, the headline list came out empty and the
        # case's headline error was 0 %.
        at, other = run({"wall_ns": 1000.0}), run({"wall_ns": 5000.0})
        cmp = me.compare(self.gqa, at, other)
        self.assertTrue(cmp["failed"])
        self.assertNotIn("headline", cmp)
        self.assertIn("sim_time_ns (AT)", cmp["stderr"][0])
        bad = me.check(rows_for(self.gqa, at, other), ["flow"])
        self.assertEqual(len(bad), 1)
        self.assertIn("failed", bad[0])
        self.assertIn("sim_time_ns", bad[0])

    def test_key_missing_from_the_other_mode_fails(self):
        cmp = me.compare(self.gqa, run({"sim_time_ns": 1000.0}), run({"other": 1000.0}))
        self.assertTrue(cmp["failed"])
        self.assertIn("sim_time_ns (other mode)", cmp["stderr"][0])

    def test_one_of_two_headline_keys_missing_fails(self):
        gemm = me.case("gemm_32x3072x32 trn1", "trn1", "gemm", "gemm_32x3072x32", tags=["shipped"])
        cmp = me.compare(gemm, run({"sim_time_ns": 10.0}), run({"sim_time_ns": 10.0}))
        self.assertTrue(cmp["failed"])
        self.assertIn("efficiency (AT)", cmp["stderr"][0])

    def test_testbench_without_headline_fails(self):
        c = me.case("newbench x trn2", "trn2", "newbench", "x", tags=["shipped"])
        cmp = me.compare(c, run({"sim_time_ns": 1.0}), run({"sim_time_ns": 1.0}))
        self.assertTrue(cmp["failed"])
        self.assertIn("no headline figure", cmp["stderr"][0])
        self.assertEqual(len(me.check(rows_for(c, run({"sim_time_ns": 1.0}), run({"sim_time_ns": 1.0})), ["flow"])), 1)

    def test_multicore_gemm_is_judged_by_tflops_too(self):
        gemm = me.case("gemm_4096x4096x4096_bf16 trn2", "trn2", "gemm", "gemm_4096x4096x4096_bf16", tags=["shipped"])
        at = run({"sim_time_ns": 100.0, "tflops": 50.0, "per_core": [{"sim_time_ns": 100.0}]})
        other = run({"sim_time_ns": 100.0, "tflops": 40.0, "per_core": [{"sim_time_ns": 100.0}]})
        cmp = me.compare(gemm, at, other)
        self.assertEqual(cmp["headline_key"], "tflops")
        self.assertAlmostEqual(cmp["headline"], -0.2)

    def test_every_headline_names_the_current_key(self):
        for tb, keys in me.HEADLINE.items():
            self.assertNotIn("wall_ns", keys, tb)


if __name__ == "__main__":
    unittest.main()
