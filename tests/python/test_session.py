"""docs/python.md's ten-line session: a GEMM sweep over tiles and HBM bandwidth, its best point and
its plot, as a user types it (Debian python3, the installed package). The figures are the model's:
48 tiles at 25.6 GB/s per PC is the acceptance oracle (88 +- 3 %)."""
import contextlib
import io
import os
import re
import tempfile
import unittest

import nctlm


class Session(unittest.TestCase):
    def test_the_documented_session(self):
        os.chdir(tempfile.mkdtemp(prefix="nctlm-session-"))
        df = nctlm.sweep(platform="trn1", testbench="gemm", workload="gemm_32x3072x32",
                         grid={"hbm.pc_bandwidth": ["6.4 GB/s", "25.6 GB/s"], "workload.tiles": [1, 4, 16, 48]},
                         output="gemm-sweep", jobs=2)
        self.assertEqual(len(df), 8)
        best = df.loc[df["efficiency"].idxmax()]
        self.assertEqual((best["hbm.pc_bandwidth"], best["workload.tiles"]), ("25.6 GB/s", 48))
        self.assertAlmostEqual(best["efficiency"], 0.88, delta=0.03)
        for bw in ("6.4 GB/s", "25.6 GB/s"):
            eff = list(df[df["hbm.pc_bandwidth"] == bw]["efficiency"])
            self.assertEqual(eff, sorted(eff))  # more tiles amortize the pipeline fill
        slow = df[df["hbm.pc_bandwidth"] == "6.4 GB/s"]["efficiency"].iloc[-1]
        self.assertLess(slow, 0.5 * best["efficiency"])  # HBM-bound at a quarter of the bandwidth
        png = nctlm.plot(df, x="workload.tiles", y="efficiency", hue="hbm.pc_bandwidth", logx=True)
        self.assertTrue(png.endswith("gemm-sweep/efficiency-vs-workload.tiles.png"))
        self.assertGreater(os.path.getsize(png), 10000)

    def test_the_doc_shows_what_its_block_prints(self):
        """The ten lines as docs/python.md writes them, run as they are: they print the output the
        doc shows (the PNG's directory aside: the doc ran in /tmp/session)."""
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")) as f:
            doc = f.read()
        m = re.search(r"```python\n(.*?)```.*?```\n(.*?)```", doc, re.S)
        self.assertIsNotNone(m, "docs/python.md: no python block followed by its output")
        code, shown = m.group(1), m.group(2)
        self.assertLessEqual(len(code.strip().splitlines()), 10)
        work = tempfile.mkdtemp(prefix="nctlm-doc-session-")
        os.chdir(work)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "docs/python.md", "exec"), {})
        got, want = printed.getvalue().splitlines(), shown.splitlines()
        self.assertEqual(got[:-1], want[:-1])
        self.assertEqual(got[-1], os.path.join(work, "gemm-sweep", os.path.basename(want[-1])))


if __name__ == "__main__":
    unittest.main(verbosity=2)
