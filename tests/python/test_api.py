"""The Python API (python/nctlm) from an install prefix, with Debian's python3 (issue 23, item 6).

Run by ctest with PYTHONPATH set to the prefix's python directory; the package finds the nctlm
CLI installed beside it.
"""
import json
import os
import tempfile
import unittest

import nctlm


class Run(unittest.TestCase):
    def test_probe_on_trn1_is_the_acceptance_latency(self):
        r = nctlm.run(platform="trn1", testbench="probe")
        self.assertAlmostEqual(r["results"]["latency_ns"], 140.93, delta=0.5)
        self.assertEqual(r["testbench"], "probe")
        self.assertEqual(r["config"]["hbm"]["pc_bandwidth"], "25.6 GB/s")
        self.assertGreater(r["sim"]["sim_time_ns"], 0)
        self.assertIn("host_time_s", r["sim"])

    def test_sets_move_the_figure(self):
        base = nctlm.run(platform="tiny", testbench="probe")["results"]["latency_ns"]
        slow = nctlm.run(platform="tiny", testbench="probe", sets={"noc.hop_cycles": 40})["results"]["latency_ns"]
        self.assertGreater(slow, base)

    def test_lt_timing(self):
        r = nctlm.run(platform="trn1", testbench="probe", timing="lt")
        self.assertEqual(r["config"]["sim"]["timing"], "lt")

    def test_a_bad_key_raises_a_configuration_error_naming_the_set(self):
        with self.assertRaises(nctlm.ConfigurationError) as e:
            nctlm.run(platform="tiny", testbench="probe", sets={"dma.chanels": 4})
        self.assertEqual(e.exception.exit_code, 2)
        self.assertIn("--set dma.chanels=4", str(e.exception))
        self.assertIn("did you mean 'channels'", str(e.exception))

    def test_a_simulation_error_raises_a_simulation_error(self):
        with self.assertRaises(nctlm.SimulationError) as e:
            nctlm.run(platform="tiny", testbench="probe", sets={"noc.link_bandwidth": "1e-300 B/s"})
        self.assertEqual(e.exception.exit_code, 3)
        self.assertIn("simulated time overflow", str(e.exception))

    def test_replay_of_a_stats_dict_gives_the_same_results(self):
        first = nctlm.run(platform="tiny", testbench="gemm", workload="gemm_32x3072x32",
                          sets={"workload.tiles": 4, "dma.channels": 4})
        again = nctlm.run(replay=first)
        self.assertEqual(again["results"], first["results"])
        self.assertEqual(again["config"], first["config"])

    def test_a_shipped_kernel_with_its_arguments_runs_and_replays(self):
        first = nctlm.run(platform="tiny", testbench="kernel", workload="add",
                          sets={"kernel.ROWS": 256, "kernel.COLS": 512})
        self.assertEqual(first["config"]["kernel"], {"ROWS": 256, "COLS": 512})
        self.assertTrue(first["program"].endswith("/share/nctlm/configs/kernels/add.json"), first["program"])
        again = nctlm.run(replay=first)
        self.assertEqual(again["results"], first["results"])
        whole = nctlm.run(platform="tiny", testbench="kernel", workload="add")
        self.assertGreater(whole["results"]["sim_time_ns"], first["results"]["sim_time_ns"])


class Installed(unittest.TestCase):
    def test_the_package_drives_the_cli_installed_beside_it(self):
        package = os.path.dirname(os.path.realpath(nctlm.__file__))
        prefix = os.path.realpath(os.path.join(package, "..", "..", "..", ".."))  # lib/python3/dist-packages/nctlm
        self.assertEqual(os.path.realpath(nctlm.executable()), os.path.join(prefix, "bin", "nctlm"))


class Describe(unittest.TestCase):
    def test_a_section_lists_its_keys_with_units_and_provenance(self):
        d = nctlm.describe("hbm")
        keys = {p["key"]: p for p in d["params"]}
        self.assertEqual(keys["hbm.t_rc"]["unit"], "s")
        self.assertEqual(keys["hbm.t_rc"]["range"], "0 ns..10 us")
        self.assertEqual(keys["hbm.pc_bandwidth"]["provenance"], "documented")

    def test_names(self):
        self.assertIn("probe", nctlm.testbenches())
        self.assertEqual(nctlm.platforms(), ["tiny", "trn1", "trn1-16", "trn2", "trn2-16"])
        self.assertIn("gemm_32x3072x32", nctlm.workloads())
        self.assertRegex(nctlm.version(), r"^\d+\.\d+\.\d+$")


class Sweep(unittest.TestCase):
    def test_a_grid_gives_one_row_per_point_in_order_and_plots(self):
        out = tempfile.mkdtemp(prefix="nctlm-py-")
        df = nctlm.sweep(platform="tiny", testbench="probe", grid={"testbench.bytes": ["1 KiB", "4 KiB", "16 KiB"]},
                         output=out, jobs=2)
        self.assertEqual(list(df["testbench.bytes"]), ["1 KiB", "4 KiB", "16 KiB"])
        self.assertEqual(list(df["status"]), ["ok"] * 3)
        lat = list(df["latency_ns"])
        self.assertLess(lat[0], lat[1])
        self.assertLess(lat[1], lat[2])
        self.assertEqual(df.attrs["output"], os.path.abspath(out))
        png = nctlm.plot(df, x="testbench.bytes", y="latency_ns")
        self.assertTrue(os.path.getsize(png) > 1000)

    def test_a_spec_as_a_dict(self):
        df = nctlm.sweep({"name": "two", "platform": "tiny", "testbench": "b2b",
                          "grid": {"dma.channel_release": ["on_accept", "on_response"]},
                          "set": {"testbench.n": 4}})
        self.assertEqual(len(df), 2)
        self.assertGreater(df["ratio"][1], df["ratio"][0])

    def test_a_typo_in_a_grid_key_is_a_configuration_error_at_its_line(self):
        with self.assertRaises(nctlm.ConfigurationError) as e:
            nctlm.sweep(platform="tiny", testbench="probe", grid={"testbench.bytez": ["1 KiB"]})
        self.assertIn("'testbench.bytez' is not a key", str(e.exception))
        self.assertIn("did you mean 'testbench.bytes'", str(e.exception))
        self.assertRegex(str(e.exception), r"\.spec\.yaml:\d+:\d+: ")

    def test_a_failed_point_is_a_row_and_a_warning(self):
        with self.assertWarns(UserWarning):
            df = nctlm.sweep(platform="tiny", testbench="probe",
                             grid={"noc.link_bandwidth": ["100 GB/s", "1e-300 B/s"]})
        self.assertEqual(list(df["status"]), ["ok", "failed"])
        self.assertEqual(df.attrs["exit_code"], 3)


class Studies(unittest.TestCase):
    def test_sensitivity_frame_and_report(self):
        df = nctlm.sensitivity(platform="trn1", testbench="probe", params=["hbm.pc_bandwidth", "noc.hop_cycles"],
                               draw=False)
        self.assertEqual(set(df["parameter"]), {"hbm.pc_bandwidth", "noc.hop_cycles"})
        row = df[df["parameter"] == "hbm.pc_bandwidth"].iloc[0]
        self.assertEqual(row["base"], "25.6 GB/s")
        self.assertTrue(row["lopsided"])  # -10 % -> +6.0 %, +10 % -> -0.1 %
        self.assertIn("latency_ns", df.attrs["report"]["figures"])

    def test_uncertainty_samples(self):
        df = nctlm.uncertainty(platform="trn1", testbench="probe", samples=4, params=["noc.hop_cycles"],
                               figures=["latency_ns"], draw=False)
        self.assertEqual(list(df.columns), ["case", "noc.hop_cycles [count]", "latency_ns [ns]"])
        self.assertEqual(len(df), 4)


if __name__ == "__main__":
    unittest.main(verbosity=2)
