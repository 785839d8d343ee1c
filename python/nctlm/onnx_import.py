"""An ONNX model as an nctlm op graph (docs/models.md, "ONNX").

usage: python3 -m nctlm.onnx_import MODEL.onnx [-o GRAPH.json] [--dim NAME=VALUE]...
                                    [--phase encoder|prefill|other] [--dtype bf16|fp32|keep] [--name NAME]

Reads the model with Debian's python3-onnx (weights are not loaded: only their shapes matter, so
external data may be absent), gives symbolic dimensions their values (--dim batch=16), infers every
tensor's shape and maps the nodes onto the graph's ops:

  MatMul with a 2-D initializer (+ Add of a 1-D initializer)      linear (with bias)
  MatMul of two activations                                       matmul / batch_matmul
  the attention pattern: per-head Reshape + Transpose of q/k/v,
    MatMul(q, k^T), a scale (Div/Mul), an optional additive mask,
    Softmax, MatMul(p, v), Transpose + Reshape back               attention (causal = false)
  LayerNormalization                                              layernorm
  Gelu, or its erf form 0.5 x (1 + erf(x / sqrt 2))               gelu
  Sigmoid(x) * x                                                  silu
  Softmax (last axis), Add, Mul, Sigmoid-free elementwise         softmax, add, mul
  Gather of an initializer by integer indices                     embedding
  Reshape / Flatten / Squeeze / Unsqueeze / Identity / Cast of a
    float tensor to itself, Constant, Shape arithmetic feeding them  no op (row-major views)

Activations are kept as 2-D [rows, last dimension] row-major views. Anything else stops the import
with exit status 2, naming the node and its op type: there is no silent stand-in. Compute is bf16 by
default (neuronx-cc casts matmuls to bf16 by default; --dtype keep keeps the model's types).
"""

import argparse
import json
import math
import re
import sys

EXIT_BAD_INPUT = 2


class ImportError_(Exception):
    """A model the importer cannot map: the message names the node and op type."""


def _onnx():
    try:
        import onnx  # noqa: F401
        import onnx.shape_inference  # noqa: F401
        return onnx
    except ImportError as e:  # pragma: no cover - install-deps installs python3-onnx
        raise ImportError_(f"python3-onnx is not installed ({e}): scripts/install-deps installs it") from e


VIEW_OPS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}
CONSTANT_OPS = {"Constant", "Shape", "Gather_shape", "Concat_shape", "ConstantOfShape"}
DTYPES = {1: "fp32", 10: "fp16", 16: "bf16", 6: "int32", 7: "int32", 11: "fp32"}


def _sanitize(name):
    return re.sub(r"[^A-Za-z0-9_.\-/]", "_", name) or "t"


class Importer:
    def __init__(self, model, dims, dtype, phase, name):
        self.onnx = _onnx()
        self.model = model
        self.dims = dims
        self.dtype = dtype
        self.phase = phase
        self.name = name
        self.g = model.graph
        self.init = {i.name: i for i in self.g.initializer}
        self.const = {}         # name -> list of ints (Constant nodes and initializers used as shapes)
        self.shape = {}         # tensor name -> concrete shape (list of ints)
        self.etype = {}         # tensor name -> ONNX element type
        self.producer = {}      # tensor name -> node
        self.consumers = {}     # tensor name -> [nodes]
        self.alias = {}         # tensor name -> the graph tensor it is a view of
        self.done = set()       # node indices mapped
        self.tensors = {}       # graph tensor name -> JSON
        self.ops = []

    # -- shapes -------------------------------------------------------------------------------
    def fix_dims(self):
        onnx = self.onnx
        used = set()
        for vi in list(self.g.input) + list(self.g.output):
            for d in vi.type.tensor_type.shape.dim:
                if d.dim_param:
                    if d.dim_param not in self.dims:
                        raise ImportError_(f"input/output '{vi.name}' has the symbolic dimension '{d.dim_param}': give it a "
                                           f"value with --dim {d.dim_param}=N")
                    used.add(d.dim_param)
                    d.dim_value = self.dims[d.dim_param]
        unknown = set(self.dims) - used
        if unknown:
            raise ImportError_(f"--dim {sorted(unknown)[0]}: the model has no such symbolic dimension")
        self.model = onnx.shape_inference.infer_shapes(self.model, strict_mode=False)
        self.g = self.model.graph
        for vi in list(self.g.input) + list(self.g.output) + list(self.g.value_info):
            tt = vi.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            if tt.HasField("shape") and all(d is not None and d > 0 for d in dims):
                self.shape[vi.name] = dims
            elif tt.HasField("shape") and not dims:
                self.shape[vi.name] = []
            self.etype[vi.name] = tt.elem_type
        for i in self.g.initializer:
            self.shape[i.name] = list(i.dims)
            self.etype[i.name] = i.data_type
            if i.data_type in (6, 7) and len(i.dims) <= 1 and (not i.dims or i.dims[0] <= 16) and not i.external_data:
                from onnx import numpy_helper
                self.const[i.name] = [int(v) for v in numpy_helper.to_array(i).reshape(-1)]

    # -- graph tensors ------------------------------------------------------------------------
    def dtype_of(self, onnx_name):
        t = DTYPES.get(self.etype.get(onnx_name, 1), "fp32")
        if t == "int32":
            return t
        return t if self.dtype == "keep" else self.dtype

    def tensor(self, onnx_name, kind="activation", flatten=True, shape=None):
        """The graph tensor behind an ONNX tensor (views resolved), declared on first use."""
        name = self.alias.get(onnx_name, onnx_name)
        gname = _sanitize(name)
        if gname in self.tensors:
            return gname
        s = list(shape or self.shape.get(name) or [])
        if not s:
            raise ImportError_(f"tensor '{name}' has no known shape (after --dim values and shape inference)")
        if flatten and len(s) > 2:
            s = [math.prod(s[:-1]), s[-1]]
        t = {"name": gname, "shape": s, "dtype": self.dtype_of(name)}
        if kind != "activation":
            t["kind"] = kind
        self.tensors[gname] = t
        return gname

    def op(self, node, kind, layer=None, **fields):
        o = {"op": kind, "name": _sanitize(node.name or f"{kind}{len(self.ops)}")}
        names = {x["name"] for x in self.ops}
        while o["name"] in names:
            o["name"] += "_"
        layer = self.layer_of(node.name) if layer is None else layer
        if layer is not None:
            o["layer"] = layer
        o.update(fields)
        self.ops.append(o)
        return o

    @staticmethod
    def layer_of(name):
        m = re.search(r"(?:^|[./_])(?:layers?|l|h|block)[._/]?(\d+)(?:[./_]|$)", name or "")
        return int(m.group(1)) if m else None

    # -- helpers ------------------------------------------------------------------------------
    def only_consumer(self, tensor, op_type=None):
        c = self.consumers.get(tensor, [])
        if len(c) != 1 or (op_type and c[0].op_type != op_type):
            return None
        return c[0]

    def idx(self, node):
        return self.index[id(node)]

    def fail(self, node, why):
        raise ImportError_(f"node '{node.name or '(unnamed)'}' ({node.op_type}): {why}")

    def is_init(self, name):
        return name in self.init

    def scalar_const(self, name):
        """A scalar constant's value (initializer or Constant node), or None."""
        from onnx import numpy_helper
        if name in self.init and not self.init[name].external_data:
            a = numpy_helper.to_array(self.init[name])
            return float(a.reshape(-1)[0]) if a.size == 1 else None
        p = self.producer.get(name)
        if p is not None and p.op_type == "Constant":
            for a in p.attribute:
                if a.name == "value":
                    v = numpy_helper.to_array(a.t)
                    return float(v.reshape(-1)[0]) if v.size == 1 else None
        return None

    # -- patterns -----------------------------------------------------------------------------
    def head_source(self, tensor, perm):
        """tensor = Transpose(perm)(Reshape(x, [B, S, H, D])): (x, nodes, H)."""
        t = self.producer.get(tensor)
        if t is None or t.op_type != "Transpose":
            return None
        p = [a.ints for a in t.attribute if a.name == "perm"]
        if not p or list(p[0]) != perm:
            return None
        r = self.producer.get(t.input[0])
        if r is None or r.op_type != "Reshape":
            return None
        s = self.shape.get(r.output[0])
        if not s or len(s) != 4:
            return None
        return r.input[0], [t, r], s[2]

    def match_attention(self, softmax):
        """Softmax at the heart of attention: returns the nodes to consume and the op's fields."""
        nodes = [softmax]
        x = self.producer.get(softmax.input[0])
        mask = None
        if x is not None and x.op_type == "Add":
            a, b = x.input
            mask = b if self.producer.get(a) is not None and self.producer[a].op_type in ("Div", "Mul") else a
            nodes.append(x)
            x = self.producer.get(a if mask == b else b)
        if x is None or x.op_type not in ("Div", "Mul") or self.scalar_const(x.input[1]) is None:
            return None
        nodes.append(x)
        qk = self.producer.get(x.input[0])
        if qk is None or qk.op_type != "MatMul":
            return None
        nodes.append(qk)
        q = self.head_source(qk.input[0], [0, 2, 1, 3])
        k = self.head_source(qk.input[1], [0, 2, 3, 1])
        pv = self.only_consumer(softmax.output[0], "MatMul")
        if q is None or k is None or pv is None or pv.input[0] != softmax.output[0]:
            return None
        v = self.head_source(pv.input[1], [0, 2, 1, 3])
        if v is None:
            return None
        back = self.only_consumer(pv.output[0], "Transpose")
        if back is None or [list(a.ints) for a in back.attribute if a.name == "perm"] != [[0, 2, 1, 3]]:
            return None
        merge = self.only_consumer(back.output[0], "Reshape")
        if merge is None:
            return None
        nodes += q[1] + k[1] + v[1] + [pv, back, merge]
        qs = self.shape[qk.input[0]]  # [B, H, S, D]
        return nodes, {"q": q[0], "k": k[0], "v": v[0], "o": merge.output[0], "heads": q[2], "kv_heads": k[2],
                       "batch": qs[0], "mask": mask}

    def match_gelu_erf(self, div):
        """Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5 (either Mul order)."""
        c = self.scalar_const(div.input[1])
        if c is None or abs(c - math.sqrt(2)) > 1e-3:
            return None
        x = div.input[0]
        erf = self.only_consumer(div.output[0], "Erf")
        add = erf and self.only_consumer(erf.output[0], "Add")
        m1 = add and self.only_consumer(add.output[0], "Mul")
        m2 = m1 and self.only_consumer(m1.output[0], "Mul")
        if not m2 or x not in m1.input:
            return None
        return [div, erf, add, m1, m2], x, m2.output[0]

    # -- the walk -----------------------------------------------------------------------------
    def run(self):
        self.fix_dims()
        nodes = list(self.g.node)
        self.index = {id(n): i for i, n in enumerate(nodes)}
        for n in nodes:
            for o in n.output:
                self.producer[o] = n
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)
        # Attention first: its Reshape/Transpose nodes come before the Softmax in the node order.
        self.attention = {}
        for n in nodes:
            if n.op_type == "Softmax":
                m = self.match_attention(n)
                if m:
                    self.consume([x for x in m[0] if x is not n])
                    self.attention[self.idx(n)] = m[1]
        graph_inputs = {i.name for i in self.g.input if i.name not in self.init}
        for i in self.g.input:  # integer inputs (token ids) flat: one id per token
            if i.name in graph_inputs:
                flat = self.etype.get(i.name) in (6, 7)
                self.tensor(i.name, "input", flatten=not flat,
                            shape=[math.prod(self.shape.get(i.name) or [0])] if flat else None)
        for n in nodes:
            i = self.idx(n)
            if i in self.done:
                continue
            self.node(n)
            self.done.add(i)
        for o in self.g.output:
            name = _sanitize(self.alias.get(o.name, o.name))
            if name in self.tensors and self.tensors[name].get("kind") in (None, "activation"):
                self.tensors[name]["kind"] = "output"
        tokens = 0
        for i in self.g.input:
            if i.name in graph_inputs and self.etype.get(i.name) in (6, 7):
                tokens = math.prod(self.shape.get(i.name) or [0])
                break
        layers = sorted({o["layer"] for o in self.ops if "layer" in o})
        return {"format": "nctlm-graph", "version": 1, "name": self.name, "source": self.source, "phase": self.phase,
                "tokens": tokens, "layers": len(layers), "placement": {"tp": 1},
                "tensors": list(self.tensors.values()), "ops": self.ops}

    def consume(self, nodes):
        for n in nodes:
            self.done.add(self.idx(n))

    def node(self, n):
        t = n.op_type
        if t in ("Constant",):
            return
        if t in ("Shape", "Gather", "Concat", "Unsqueeze", "Cast", "Slice", "Mul", "Add", "Div", "Sub") and \
                self.is_shape_arithmetic(n):
            return
        if t in VIEW_OPS or (t == "Cast" and self.etype.get(n.input[0]) == self.etype.get(n.output[0])):
            self.alias[n.output[0]] = self.alias.get(n.input[0], n.input[0])
            return
        if t == "Softmax":
            f = self.attention.get(self.idx(n))
            if f:
                self.op(n, "attention", q=self.tensor(f["q"]), k=self.tensor(f["k"]), v=self.tensor(f["v"]),
                        o=self.tensor(f["o"]), heads=f["heads"], kv_heads=f["kv_heads"], batch=f["batch"], causal=False)
                return
            axis = [a.i for a in n.attribute if a.name == "axis"]
            if axis and axis[0] not in (-1, len(self.shape.get(n.input[0], [])) - 1):
                self.fail(n, "softmax over an axis other than the last")
            self.op(n, "softmax", x=self.tensor(n.input[0]), y=self.tensor(n.output[0]))
            return
        if t == "MatMul":
            a, b = n.input
            if self.is_init(b) and len(self.shape[b]) == 2:
                w = self.tensor(b, "weight", flatten=False)
                add = self.only_consumer(n.output[0], "Add")
                bias = None
                if add is not None:
                    other = add.input[1] if add.input[0] == n.output[0] else add.input[0]
                    if self.is_init(other) and self.shape[other] == [self.shape[b][1]]:
                        bias = other
                out = n.output[0]
                fields = {"x": self.tensor(a), "w": w}
                if bias:
                    self.consume([add])
                    fields["b"] = self.tensor(bias, "weight", flatten=False)
                    out = add.output[0]
                fields["y"] = self.tensor(out)
                self.op(n, "linear", **fields)
                return
            sa, sb = self.shape.get(a), self.shape.get(b)
            if sa and sb and len(sa) == 2 and len(sb) == 2:
                self.op(n, "matmul", a=self.tensor(a), b=self.tensor(b), y=self.tensor(n.output[0]))
                return
            if sa and sb and len(sa) == len(sb) >= 3 and sa[:-2] == sb[:-2]:
                batch = math.prod(sa[:-2])
                self.op(n, "batch_matmul", a=self.tensor(a, shape=[batch] + sa[-2:], flatten=False),
                        b=self.tensor(b, shape=[batch] + sb[-2:], flatten=False),
                        y=self.tensor(n.output[0], shape=[batch, sa[-2], sb[-1]], flatten=False))
                return
            self.fail(n, f"MatMul of shapes {sa} and {sb} (supported: an activation by a 2-D weight, 2-D by 2-D, "
                         "or batches of equal leading dimensions)")
        if t == "LayerNormalization":
            axis = [a.i for a in n.attribute if a.name == "axis"]
            if axis and axis[0] not in (-1, len(self.shape.get(n.input[0], [])) - 1):
                self.fail(n, "layer normalization over other than the last axis")
            if len(n.input) < 3 or not n.input[2]:
                self.fail(n, "layer normalization without a bias input (B)")
            eps = [a.f for a in n.attribute if a.name == "epsilon"]
            self.op(n, "layernorm", x=self.tensor(n.input[0]), w=self.tensor(n.input[1], "weight", flatten=False),
                    b=self.tensor(n.input[2], "weight", flatten=False), y=self.tensor(n.output[0]),
                    eps=eps[0] if eps else 1e-5)
            return
        if t == "Gelu":
            self.op(n, "gelu", x=self.tensor(n.input[0]), y=self.tensor(n.output[0]))
            return
        if t == "Div":
            m = self.match_gelu_erf(n)
            if m:
                nodes, x, y = m
                self.consume(nodes)
                self.op(n, "gelu", x=self.tensor(x), y=self.tensor(y))
                return
            self.fail(n, "division outside the patterns the importer maps (attention's scale, GELU's erf form)")
        if t == "Sigmoid":
            mul = self.only_consumer(n.output[0], "Mul")
            if mul is not None and n.input[0] in mul.input:
                self.consume([mul])
                self.op(n, "silu", x=self.tensor(n.input[0]), y=self.tensor(mul.output[0]))
                return
            self.fail(n, "a sigmoid not multiplied by its input (only SiLU = x sigmoid(x) is mapped)")
        if t in ("Add", "Mul"):
            a, b = n.input
            sa, sb = self.shape.get(a), self.shape.get(b)
            kind = "add" if t == "Add" else "mul"
            if sa == sb and not self.is_init(a) and not self.is_init(b):
                self.op(n, kind, a=self.tensor(a), b=self.tensor(b), y=self.tensor(n.output[0]))
                return
            if t == "Add" and self.is_init(b) and sb == [sa[-1]]:
                self.op(n, "add", a=self.tensor(a), b=self.tensor(b, "weight", flatten=False), y=self.tensor(n.output[0]))
                return
            self.fail(n, f"{t} of shapes {sa} and {sb} (supported: two activations of one shape; Add of a bias row)")
        if t == "Gather":
            table, ids = n.input
            axis = [a.i for a in n.attribute if a.name == "axis"]
            if self.is_init(table) and (not axis or axis[0] == 0) and self.etype.get(ids) in (6, 7):
                s = self.shape[ids]
                self.op(n, "embedding", ids=self.tensor(ids, flatten=False, shape=[math.prod(s)]),
                        table=self.tensor(table, "weight", flatten=False), y=self.tensor(n.output[0]))
                return
            self.fail(n, "a Gather other than rows of an initializer table by integer ids")
        self.fail(n, "this op is outside the supported set (python3 -m nctlm.onnx_import --help lists it)")

    def is_shape_arithmetic(self, n):
        """Nodes that only compute shapes (int64 tensors from Shape/Constant): no data to move."""
        if n.op_type == "Shape":
            return True
        for i in n.input:
            if not i:
                continue
            p = self.producer.get(i)
            is_const = i in self.const or (p is not None and p.op_type in ("Constant", "Shape")) or \
                (p is not None and self.idx(p) in self.done and self.etype.get(i) == 7 and i not in self.tensors)
            if not is_const:
                return False
        for o in n.output:
            self.const[o] = []
        return True


def import_model(path, dims=None, dtype="bf16", phase="encoder", name=None):
    onnx = _onnx()
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception as e:  # noqa: BLE001 - onnx raises several types for a bad file
        raise ImportError_(f"{path}: not a readable ONNX model ({e})") from e
    imp = Importer(model, dims or {}, dtype, phase, name or (model.graph.name or path))
    imp.source = path
    return imp.run()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m nctlm.onnx_import", description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--dim", action="append", default=[], help="NAME=VALUE for a symbolic dimension")
    ap.add_argument("--phase", default="encoder", choices=["encoder", "prefill", "other"])
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp32", "keep"])
    ap.add_argument("--name")
    a = ap.parse_args(argv)
    dims = {}
    for d in a.dim:
        k, _, v = d.partition("=")
        if not k or not v.isdigit() or int(v) < 1:
            print(f"nctlm.onnx_import: --dim {d}: expected NAME=N with N >= 1", file=sys.stderr)
            return EXIT_BAD_INPUT
        dims[k] = int(v)
    try:
        g = import_model(a.model, dims, a.dtype, a.phase, a.name)
    except ImportError_ as e:
        print(f"nctlm.onnx_import: {a.model}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    text = json.dumps(g, indent=1) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
