"""A BERT-style transformer encoder built with onnx.helper (no torch), weights declared by shape only.

The weights are initializers marked as external data whose file does not exist: an ONNX file of a
few KB describes a BERT-base (110 M parameters); the importer reads shapes, never the data.
Symbolic input dimensions "batch" and "sequence", as exporters write them.
"""

import math

import onnx
from onnx import TensorProto, helper


def _weight(name, shape):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(shape)
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "weights.bin (not shipped: shapes only)"
    return t


def build_encoder(layers=12, hidden=768, heads=12, intermediate=3072, vocab=30522, max_positions=512,
                  type_vocab=2, eps=1e-12, extra_node=None):
    """The encoder's ModelProto. extra_node: an onnx NodeProto appended before the output (tests)."""
    d = hidden // heads
    nodes, inits = [], []

    def w(name, shape):
        inits.append(_weight(name, shape))
        return name

    def const(name, values, dtype=TensorProto.INT64):
        inits.append(helper.make_tensor(name, dtype, [len(values)] if isinstance(values, list) else [], values))
        return name

    def node(op, inputs, name, **attrs):
        out = name + ".out"
        nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def linear(x, name, k, n):
        y = node("MatMul", [x, w(name + ".weight", [k, n])], name + "/MatMul")
        return node("Add", [y, w(name + ".bias", [n])], name + "/Add")

    heads_shape = const("heads_shape", [0, 0, heads, d])
    merge_shape = const("merge_shape", [0, 0, hidden])
    sqrt_d = const("sqrt_d", [math.sqrt(d)], TensorProto.FLOAT)
    sqrt2 = const("sqrt2", [math.sqrt(2.0)], TensorProto.FLOAT)
    one = const("one", [1.0], TensorProto.FLOAT)
    half = const("half", [0.5], TensorProto.FLOAT)

    e = node("Gather", [w("embeddings.word", [vocab, hidden]), "input_ids"], "embeddings/word")
    p = node("Gather", [w("embeddings.position", [max_positions, hidden]), "position_ids"], "embeddings/position")
    t = node("Gather", [w("embeddings.token_type", [type_vocab, hidden]), "token_type_ids"], "embeddings/token_type")
    h = node("Add", [node("Add", [e, p], "embeddings/add_position"), t], "embeddings/add_type")
    h = node("LayerNormalization", [h, w("embeddings.norm.weight", [hidden]), w("embeddings.norm.bias", [hidden])],
             "embeddings/norm", axis=-1, epsilon=eps)
    for i in range(layers):
        pre = f"layer.{i}"
        q = linear(h, pre + "/query", hidden, hidden)
        k = linear(h, pre + "/key", hidden, hidden)
        v = linear(h, pre + "/value", hidden, hidden)
        split = lambda x, n: node("Reshape", [x, heads_shape], f"{pre}/{n}/split_heads")
        qt = node("Transpose", [split(q, "q")], pre + "/q/transpose", perm=[0, 2, 1, 3])
        kt = node("Transpose", [split(k, "k")], pre + "/k/transpose", perm=[0, 2, 3, 1])
        vt = node("Transpose", [split(v, "v")], pre + "/v/transpose", perm=[0, 2, 1, 3])
        s = node("Div", [node("MatMul", [qt, kt], pre + "/scores"), sqrt_d], pre + "/scale")
        a = node("MatMul", [node("Softmax", [s], pre + "/softmax", axis=-1), vt], pre + "/context")
        a = node("Reshape", [node("Transpose", [a], pre + "/context/transpose", perm=[0, 2, 1, 3]), merge_shape],
                 pre + "/context/merge_heads")
        o = linear(a, pre + "/attention_output", hidden, hidden)
        h1 = node("LayerNormalization", [node("Add", [h, o], pre + "/attention_residual"),
                                         w(pre + ".attention_norm.weight", [hidden]), w(pre + ".attention_norm.bias", [hidden])],
                  pre + "/attention_norm", axis=-1, epsilon=eps)
        f = linear(h1, pre + "/intermediate", hidden, intermediate)
        erf = node("Erf", [node("Div", [f, sqrt2], pre + "/gelu/div")], pre + "/gelu/erf")
        g = node("Mul", [node("Mul", [f, node("Add", [erf, one], pre + "/gelu/add")], pre + "/gelu/mul"), half],
                 pre + "/gelu/half")
        f2 = linear(g, pre + "/output", intermediate, hidden)
        h = node("LayerNormalization", [node("Add", [h1, f2], pre + "/output_residual"),
                                        w(pre + ".output_norm.weight", [hidden]), w(pre + ".output_norm.bias", [hidden])],
                 pre + "/output_norm", axis=-1, epsilon=eps)
    if extra_node is not None:
        extra_node.input[0] = h
        nodes.append(extra_node)
        h = extra_node.output[0]
    ids = lambda n: helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
    graph = helper.make_graph(nodes, "bert_encoder", [ids("input_ids"), ids("position_ids"), ids("token_type_ids")],
                              [helper.make_tensor_value_info(h, TensorProto.FLOAT, ["batch", "sequence", hidden])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="nctlm tests")


def save(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
