"""Every CSV nctlm writes parses with Python's csv module (RFC 4180), header and rows alike, and
reads back the values the tool meant (issue 23, item 3): a sweep's results.csv, sensitivity.csv
and uncertainty.csv, each with a field that needs quoting."""
import csv
import os
import subprocess
import tempfile
import unittest

import nctlm


def rows(path):
    with open(path, newline="") as f:
        table = list(csv.reader(f, strict=True))
    header, body = table[0], table[1:]
    for r in body:
        assert len(r) == len(header), (path, header, r)
    return header, [dict(zip(header, r)) for r in body]


def cli(*args):
    return subprocess.run([nctlm.executable()] + list(args), capture_output=True, text=True)


class CsvOutputs(unittest.TestCase):
    def test_results_csv(self):
        out = tempfile.mkdtemp(prefix="nctlm-csv-")
        spec = os.path.join(out, "spec.yaml")
        with open(spec, "w") as f:
            # A failing point puts an error message (commas, quotes) into the error column.
            f.write('name: csv\nplatform: tiny\ntestbench: probe\n'
                    'grid:\n  noc.link_bandwidth: ["100 GB/s", "1e-300 B/s"]\n')
        r = cli("sweep", spec, "-o", out)
        self.assertEqual(r.returncode, 3, r.stderr)
        header, body = rows(os.path.join(out, "results.csv"))
        self.assertIn("sim_time_ns", header)
        self.assertIn("host_time_s", header)
        self.assertEqual([b["noc.link_bandwidth"] for b in body], ["100 GB/s", "1e-300 B/s"])
        self.assertIn("simulated time overflow", body[1]["error"])

    def test_sensitivity_csv_keeps_units_without_doubled_quotes(self):
        out = tempfile.mkdtemp(prefix="nctlm-csv-")
        r = cli("sensitivity", "-p", "trn1", "-t", "probe", "--params", "hbm.pc_bandwidth,noc.hop_cycles", "-o", out,
                "--no-plot")
        self.assertEqual(r.returncode, 0, r.stderr)
        header, body = rows(os.path.join(out, "sensitivity.csv"))
        self.assertIn("down_change_pct", header)
        pc = [b for b in body if b["parameter"] == "hbm.pc_bandwidth"][0]
        self.assertEqual(pc["base"], "25.6 GB/s")  # 0.2 wrote ""25.6 GB/s"", read as 25.6 GB/s""
        self.assertEqual(pc["down"], "23.04 GB/s")
        self.assertEqual(pc["figure_unit"], "ns")

    def test_uncertainty_csv_has_units_in_its_header(self):
        out = tempfile.mkdtemp(prefix="nctlm-csv-")
        r = cli("uncertainty", "-p", "trn1", "-t", "probe", "-n", "3", "--params", "noc.clock,noc.hop_cycles", "-o",
                out, "--no-plot")
        self.assertEqual(r.returncode, 0, r.stderr)
        header, body = rows(os.path.join(out, "uncertainty.csv"))
        self.assertEqual(header[:3], ["case", "noc.clock [Hz]", "noc.hop_cycles [count]"])
        self.assertIn("latency_ns [ns]", header)
        self.assertEqual(len(body), 3)
        float(body[0]["noc.clock [Hz]"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
