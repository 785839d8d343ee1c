"""The structure of traced programs: loops stay loops with affine indices, tiles in loops rotate,
lines name the user's code, grids use pid, the outputs are classified."""

import json
import os
import unittest

import support


def loops(body, depth=0):
    """(depth, loop node) for every loop."""
    out = []
    for node in body:
        if "loop" in node:
            out.append((depth, node))
            out.extend(loops(node["body"], depth + 1))
    return out


class Loops(unittest.TestCase):
    def test_a_large_gemm_traces_to_loops_not_instructions(self):
        path = support.kernel_path("matmul.py")
        doc, _, _ = support.trace(path, "matmul_tiled", "lhsT=bf16[8192,4096]", "rhs=bf16[8192,8192]")
        nest = [(d, n["loop"], n["trip"], n["kind"]) for d, n in loops(doc["body"])]
        self.assertEqual(nest, [(0, "m", 32, "affine"), (1, "n", 16, "affine"), (2, "k", 64, "affine")])
        instrs = support.instructions(doc["body"])
        self.assertEqual([i["op"] for i in instrs], ["dma", "dma", "matmul", "tensor_copy", "dma"])
        lhs_load = instrs[0]
        # lhsT[k*128:(k+1)*128, m*128:(m+1)*128]: offset affine in k and m, rows of 4096 elements.
        self.assertEqual(lhs_load["src"], {"tensor": "lhsT", "offset": "k * 524288 + m * 128",
                                           "ap": [[4096, 128], [1, 128]]})
        # acc = nl.zeros(psum); acc += matmul: the first k overwrites, the others accumulate, no memset.
        self.assertEqual(instrs[2]["start"], "k == 0")
        self.assertLess(len(json.dumps(doc)), 4000)

    def test_the_zeroing_memset_stays_when_the_psum_tile_is_read_first_or_partly_accumulated(self):
        path = support.write_kernel("""
            def k(a, b):
                out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
                read_first = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
                partly = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
                seen = nl.copy(read_first)
                for k in nl.affine_range(2):
                    at = nl.load(a[k * 128:(k + 1) * 128, :])
                    bt = nl.load(b[k * 128:(k + 1) * 128, :])
                    read_first += nl.matmul(at, bt, transpose_x=True)
                    partly[:, 0:256] += nl.matmul(at, bt[:, 0:256], transpose_x=True)
                nl.store(out, value=read_first + partly + seen)
                return out
            """)
        doc, _, _ = support.trace(path, "k", "a=fp32[256,128]", "b=fp32[256,512]")
        instrs = support.instructions(doc["body"])
        self.assertEqual([i["op"] for i in instrs[:3]], ["memset", "memset", "tensor_copy"])
        self.assertEqual([i["start"] for i in instrs if i["op"] == "matmul"], [0, 0])

    def test_sequential_range_is_a_sequential_loop_and_static_range_unrolls(self):
        path = support.write_kernel("""
            def k(x):
                out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 64), nl.float32)
                for s in nl.sequential_range(4):
                    acc[...] = acc + nl.load(x[s * 128:(s + 1) * 128, :])
                for u in nl.static_range(3):
                    acc[...] = acc * 2.0
                for u in range(2):
                    acc[...] = acc + 1.0
                nl.store(out, value=acc)
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[512,64]")
        self.assertEqual([(n["loop"], n["trip"], n["kind"]) for _, n in loops(doc["body"])], [("s", 4, "sequential")])
        top = [n.get("op", "loop") for n in doc["body"]]
        self.assertEqual(top, ["memset", "loop"] + ["tensor_scalar"] * 5 + ["dma"])

    def test_loop_bounds_start_step_and_triangular_trips(self):
        path = support.write_kernel("""
            def k(x):
                out = nl.ndarray((1024, 64), nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(2, 8, 2):
                    for i in nl.affine_range(i + 1):
                        t = nl.load(x[i * 128:(i + 1) * 128, :])
                        nl.store(out[i * 128:(i + 1) * 128, :], value=t)
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[1024,64]")
        (_, outer), (_, inner) = loops(doc["body"])
        self.assertEqual((outer["loop"], outer["trip"], outer["start"], outer["step"]), ("i", 3, 2, 2))
        self.assertEqual((inner["loop"], inner["trip"]), ("i_2", "i + 1"))  # a nested name is made unique
        self.assertEqual(inner["body"][0]["src"]["offset"], "i_2 * 8192")

    def test_a_trip_of_one_is_no_loop(self):
        path = support.write_kernel("""
            def k(x):
                out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(1):
                    nl.store(out, value=nl.load(x))
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[128,64]")
        self.assertEqual([n["op"] for n in doc["body"]], ["dma", "dma"])


class Buffers(unittest.TestCase):
    SOURCE = """
        def k(x):
            out = nl.ndarray((512, 64), nl.float32, buffer=nl.shared_hbm)
            once = nl.zeros((128, 64), nl.float32)
            for a in nl.affine_range(2):
                for b in nl.affine_range(2):
                    t = nl.load(x[(a * 2 + b) * 128:(a * 2 + b + 1) * 128, :])
                    pinned = nl.ndarray((128, 64), nl.float32, bufs=1)
                    pinned[...] = nl.add(t, once)
                    nl.store(out[(a * 2 + b) * 128:(a * 2 + b + 1) * 128, :], value=pinned)
            return out
        """

    def buffers(self, bufs=2):
        doc, _, _ = support.trace(support.write_kernel(self.SOURCE), "k", "x=fp32[512,64]", bufs=bufs)
        return {b["name"]: b for b in doc["buffers"]}, support.instructions(doc["body"])

    def test_tiles_in_loops_rotate_with_the_linear_iteration_as_copy(self):
        buffers, instrs = self.buffers()
        self.assertEqual(buffers["once"]["bufs"], 1)
        self.assertEqual(buffers["t"]["bufs"], 2)
        self.assertEqual(buffers["pinned"]["bufs"], 1)  # the bufs= extension
        load = instrs[1]
        self.assertEqual(load["dst"], {"buf": "t", "copy": "a * 2 + b"})
        self.assertEqual(instrs[0]["dst"], {"buf": "once"})

    def test_bufs_option_sets_the_default_and_the_iteration_count_caps_it(self):
        buffers, _ = self.buffers(bufs=3)
        self.assertEqual(buffers["t"]["bufs"], 3)
        buffers, _ = self.buffers(bufs=9)
        self.assertEqual(buffers["t"]["bufs"], 4)  # 2 x 2 iterations

    def test_copies_that_overflow_sbuf_drop_to_one_largest_first(self):
        path = support.write_kernel("""
            def k(x):
                out = nl.ndarray((512, 10000), nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    big = nl.load(x[i * 128:(i + 1) * 128, :])
                    half = nl.exp(big[:, 0:10000])
                    nl.store(out[i * 128:(i + 1) * 128, :], value=half)
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[512,20000]")
        bufs = {b["name"]: b["bufs"] for b in doc["buffers"]}
        self.assertEqual(bufs, {"big": 1, "half": 2})  # 2 x 80000 + 2 x 40000 B > 192 KiB: big drops
        load = support.instructions(doc["body"])[0]
        self.assertEqual(load["dst"], {"buf": "big"})  # one copy: no copy index

    def test_psum_copies_pack_into_banks(self):
        path = support.write_kernel("""
            def k(x):
                out = nl.ndarray((512, 512), nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    z = [nl.zeros((128, 512), nl.float32, buffer=nl.psum) for _ in range(5)]
                    small = nl.zeros((128, 128), nl.float32, buffer=nl.psum)
                    nl.store(out[i * 128:(i + 1) * 128, :], value=z[0] + z[1] + z[2] + z[3] + z[4])
                    nl.store(out[i * 128:(i + 1) * 128, 0:128], value=small)
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[4,4]")
        bufs = sorted((b["shape"][0], b["bufs"]) for b in doc["buffers"] if b["memory"] == "psum")
        # Five 2 KiB tiles x 2 copies and a 512 B tile's two copies sharing a bank: 11 banks of 8.
        # Three big ones drop to one copy: 2 x 2 + 3 x 1 + 1 = 8 banks.
        self.assertEqual(bufs, [(128, 2), (512, 1), (512, 1), (512, 1), (512, 2), (512, 2)])

    def test_tiles_that_cannot_fit_are_refused_with_their_lines(self):
        path = support.write_kernel("""
            def k(x):
                out = nl.ndarray((128, 60000), nl.float32, buffer=nl.shared_hbm)
                big = nl.load(x)
                nl.store(out, value=nl.exp(big))
                return out
            """)
        with self.assertRaises(support.cli.NkiError) as caught:
            support.trace(path, "k", "x=fp32[128,60000]")
        self.assertIn("SBUF tiles need 480000 bytes per partition with one copy each, more than 196608 "
                      f"(--sbuf-bytes); the largest: big 240000 B ({support.line_of(path, 'big = nl.load')})",
                      str(caught.exception))

    def test_an_assigned_result_is_written_in_place(self):
        buffers, instrs = self.buffers()
        add = [i for i in instrs if i["op"] == "tensor_tensor"]
        self.assertEqual(len(add), 1)
        self.assertEqual(add[0]["dst"], {"buf": "pinned"})
        self.assertEqual(sorted(buffers), ["once", "pinned", "t"])  # no temporary for the sum

    def test_par_dim_blocks_are_free_dimensions(self):
        doc, _, _ = support.trace(support.kernel_path("matmul.py"), "matmul_blocked",
                                  "lhsT=bf16[512,512]", "rhs=bf16[512,2048]")
        buffers = {b["name"]: b for b in doc["buffers"]}
        self.assertEqual((buffers["rhs_t"]["partitions"], buffers["rhs_t"]["shape"]), (128, [2, 1024]))
        loads = [i for i in support.instructions(doc["body"]) if i["op"] == "dma" and i["dst"].get("buf") == "rhs_t"]
        self.assertEqual(loads[0]["dst"]["f"], [["bk", 1], [0, 1024]])

    def test_a_psum_tile_wider_than_a_bank_is_refused(self):
        path = support.write_kernel("""
            def k(x):
                p = nl.zeros((128, 1024), nl.float32, buffer=nl.psum)
                return x
            """)
        with self.assertRaises(support.cli.NkiError) as caught:
            support.trace(path, "k", "x=fp32[128,64]")
        self.assertEqual(str(caught.exception), support.line_of(path, "nl.psum", full=True) +
                         ": a PSUM tile holds at most 2048 bytes per partition (one bank: 512 fp32); "
                         "this one needs 4096")


class Broadcast(unittest.TestCase):
    def test_a_broadcast_row_is_one_stride_0_reload_and_its_own_load_goes(self):
        path = support.write_kernel("""
            def k(x, g, keep):
                out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
                row = nl.load(g.reshape((1, 64)))
                kept = nl.load(keep.reshape((1, 64)))
                y = nl.load(x) * row.broadcast_to((128, 64)) + kept.broadcast_to((128, 64))
                nl.store(out, value=y + nl.exp(kept).broadcast_to((128, 64)))
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[128,64]", "g=fp32[64]", "keep=fp32[64]")
        loads = [i for i in support.instructions(doc["body"]) if i["op"] == "dma" and "buf" in i["dst"]]
        # g: only the reload (partition stride 0); keep: its (1, 64) load stays (exp reads it) + a reload.
        self.assertEqual([(i["src"]["tensor"], i["src"]["ap"][0]) for i in loads],
                         [("keep", [64, 1]), ("x", [64, 128]), ("g", [0, 128]), ("keep", [0, 128])])
        self.assertNotIn("row", {b["name"] for b in doc["buffers"]})


class Masks(unittest.TestCase):
    def test_a_mask_narrows_the_free_range_on_every_operand(self):
        path = support.write_kernel("""
            def k(x, n):
                out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:64]
                t = nl.load(x[i_p, i_f])
                for j in nl.affine_range(4):
                    nl.store(out[i_p, i_f], value=nl.exp(t, mask=(i_f < n)), mask=(i_f >= j * 16) & (i_f < n))
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[128,64]", "n=40")
        exp, store = support.instructions(doc["body"])[1:]
        self.assertEqual((exp["dst"]["f"], exp["src"]["f"]), ([[0, 40]], [[0, 40]]))
        self.assertEqual(store["src"]["f"], [["j * 16", "max(0, 40 - j * 16)"]])
        self.assertEqual(store["dst"], {"tensor": "out", "offset": "j * 16",
                                        "ap": [[64, 128], [1, "max(0, 40 - j * 16)"]]})


class Lines(unittest.TestCase):
    def test_every_instruction_names_the_users_line_even_in_a_helper(self):
        path = support.write_kernel("""
            def helper(t):
                return nl.exp(t)

            def k(x):
                out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                nl.store(out, value=helper(t))
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[128,64]")
        lines = [i["line"] for i in support.instructions(doc["body"])]
        self.assertEqual(lines, [support.line_of(path, "t = nl.load"), support.line_of(path, "return nl.exp"),
                                 support.line_of(path, "nl.store")])
        self.assertTrue(all(os.sep not in line for line in lines))


class Grid(unittest.TestCase):
    def test_program_ids_become_pid_expressions(self):
        path = support.write_kernel("""
            def k(x):
                out = nl.ndarray((512, 64), nl.float32, buffer=nl.shared_hbm)
                i = nl.program_id(0) * nl.num_programs(1) + nl.program_id(1)
                t = nl.load(x[i * 128:(i + 1) * 128, :])
                nl.store(out[i * 128:(i + 1) * 128, :], value=t)
                return out
            """)
        doc, _, _ = support.trace(path, "k", "x=fp32[512,64]", grid="2,2")
        self.assertEqual(doc["grid"], 4)
        load = support.instructions(doc["body"])[0]
        self.assertEqual(load["src"]["offset"], "pid % 2 * 8192 + pid // 2 * 16384")
        with self.assertRaisesRegex(support.cli.NkiError, r"num_programs\(\[1\]\) of a 1-D launch grid"):
            support.trace(path, "k", "x=fp32[512,64]", grid="4")


class Tensors(unittest.TestCase):
    def test_kinds(self):
        path = support.write_kernel("""
            def k(a, inout, out_param, unused):
                ret = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
                tmp = nl.ndarray((128, 64), nl.float32, buffer=nl.hbm)
                t = nl.load(a)
                nl.store(tmp, value=t)
                nl.store(inout, value=nl.add(nl.load(inout), t))
                nl.store(out_param, value=t)
                nl.store(ret, value=nl.load(tmp))
                return ret
            """)
        doc, _, outputs = support.trace(path, "k", "a=fp32[128,64]", "inout=fp32[128,64]", "out_param=bf16[128,64]",
                                        "unused=fp32[4]")
        kinds = {t["name"]: (t["kind"], t.get("per_instance", False)) for t in doc["tensors"]}
        self.assertEqual(kinds, {"a": ("input", False), "inout": ("input", False), "out_param": ("output", False),
                                 "unused": ("input", False), "ret": ("output", False), "tmp": ("scratch", True)})
        self.assertEqual([t.name for t in outputs], ["ret"])
        stores = [i for i in support.instructions(doc["body"]) if i["op"] == "dma" and "tensor" in i["dst"]]
        casts = [i for i in support.instructions(doc["body"]) if i["op"] == "tensor_copy"]
        self.assertEqual(len(casts), 1)  # fp32 tile into the bf16 parameter: a cast before its DMA
        self.assertEqual(len(stores), 4)


class UserKernelSize(unittest.TestCase):
    def test_a_20_line_scaled_softmax_traces_to_a_few_kb(self):
        path = support.kernel_path("scaled_softmax.py")
        with open(path) as f:
            self.assertLessEqual(len(f.read().split("\n\ndef reference")[0].splitlines()), 20)
        out = os.path.join(support._tmp.name, "softmax.json")
        code, _, err = support.run_cli(f"{path}::scaled_softmax", "--arg", "x=bf16[4096,2048]",
                                       "--arg", "scale=0.125", "-o", out)
        self.assertEqual(code, 0, err)
        size = os.path.getsize(out)
        self.assertLess(size, 4096)
        with open(out) as f:
            doc = json.load(f)
        (_, loop), = loops(doc["body"])
        self.assertEqual(loop["trip"], 32)
        self.assertEqual(len(support.instructions(doc["body"])), 8)


if __name__ == "__main__":
    unittest.main()
