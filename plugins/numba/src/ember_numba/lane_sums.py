"""Row sums of float64 in sixteen lanes, written as LLVM vector code, so that compiled
loops add in one fixed order on every machine and still run as SIMD code.

PyTorch counterpart: aten/src/ATen/native/cpu/SumKernel.cpp (v2.13): a row summed in
``Vectorized`` lanes, then the lanes added up.

This module imports numba (its ``intrinsic`` writes the vector code), so the loops that
use it import it at their first call, as ember_numba/vector_exp.py's users do.

# NOTE [ A fixed order that still vectorizes ]
# ``total += row[j]`` compiled without reassociation is one chain of dependent adds, one
# element per add latency (LayerNorm's float64 statistics on (2048, 256): 0.37 ms with
# eight running sums, 1.1 ms with compensated ones, against 0.09 ms reassociated). With
# reassociation (ember_numba/jit.py's flags) LLVM keeps as many partial sums as the
# machine's vectors have lanes and adds them up in its own order: the sum's last bit
# then depends on the CPU the loop was compiled for. Independent running sums written
# out in the source do not help: LLVM's loop vectorizer only vectorizes a reduction it
# may reorder, and numba leaves LLVM's other vectorizer (SLP, which packs independent
# scalar chains) off. So the loop here is written as vector code: sixteen running sums
# in one ``<16 x double>``, value j into lane j % 16, the last partial vector loaded
# under a mask with zeros in the lanes past the row's end, then the lanes added in
# halves (8 + 8, 4 + 4, 2 + 2, 1 + 1). That is an order fixed by the source, and each
# lane's additions are IEEE additions whatever the machine's vectors hold: LLVM runs
# the sixteen lanes as one AVX-512 register, four AVX2 or eight SSE registers, with the
# same results, bit for bit. Sixteen lanes keep enough independent additions in flight
# to hide the add latency (eight: 5% slower on (2048, 256), 25% on (64, 1000); 32: no
# faster). Its accuracy is a pairwise sum's of sixteen plain sums: within an ulp or
# two of the exact sum, as torch's own (cascaded) sum is. A compensated (two-sum)
# version, exactly rounded nearly always, cost twice the time: torch is not exact either.
"""

import llvmlite.ir as ir
from numba import types
from numba.core.extending import intrinsic

LANES = 16
_I32, _I64 = ir.IntType(32), ir.IntType(64)
_VECTOR = ir.VectorType(ir.DoubleType(), LANES)
_ZEROS = ir.Constant(_VECTOR, [0.0] * LANES)


def _splat(builder, value, element_type):
    """A vector of ``LANES`` copies of the scalar ``value``."""
    vector_type = ir.VectorType(element_type, LANES)
    one = builder.insert_element(ir.Constant(vector_type, ir.Undefined), value, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, ir.Constant(vector_type, ir.Undefined),
                                  ir.Constant(ir.VectorType(_I32, LANES), [0] * LANES))


def _masked_load(builder, pointer, mask):
    """The lanes of ``pointer``'s vector where ``mask`` is set, zero elsewhere; nothing
    past the mask is read."""
    name = f"llvm.masked.load.v{LANES}f64.p0"
    function = builder.module.globals.get(name) or ir.Function(
        builder.module, ir.FunctionType(_VECTOR, [pointer.type, _I32, mask.type, _VECTOR]), name)
    return builder.call(function, [pointer, ir.Constant(_I32, 8), mask, _ZEROS])


def _add_lanes(builder, vector):
    """The sum of the lanes, in halves: a fixed pairwise order (NOTE above)."""
    width = LANES
    while width > 1:
        width //= 2
        low = builder.shuffle_vector(vector, vector, ir.Constant(ir.VectorType(_I32, width), list(range(width))))
        high = builder.shuffle_vector(vector, vector,
                                      ir.Constant(ir.VectorType(_I32, width), list(range(width, 2 * width))))
        vector = builder.fadd(low, high)
    return builder.extract_element(vector, ir.Constant(_I32, 0))


def _sum_lanes(builder, data, count, term):
    """``sum(term(v))`` over the row's values ``v`` (a ``<16 x double>`` at a time), in the
    fixed order of the NOTE above."""
    step = ir.Constant(_I64, LANES)
    whole = builder.mul(builder.sdiv(count, step), step)  # the values that fill whole vectors
    entry = builder.basic_block
    head, body, done = (builder.append_basic_block(f"lanes.{name}") for name in ("head", "body", "done"))
    builder.branch(head)
    builder.position_at_end(head)
    j, totals = builder.phi(_I64), builder.phi(_VECTOR)
    builder.cbranch(builder.icmp_signed("<", j, whole), body, done)
    builder.position_at_end(body)
    values = builder.load(builder.bitcast(builder.gep(data, [j]), _VECTOR.as_pointer()), align=8)
    added, after = builder.fadd(totals, term(values)), builder.add(j, step)
    builder.branch(head)
    j.add_incoming(ir.Constant(_I64, 0), entry)
    j.add_incoming(after, body)
    totals.add_incoming(_ZEROS, entry)
    totals.add_incoming(added, body)
    builder.position_at_end(done)
    left = _splat(builder, builder.trunc(builder.sub(count, whole), _I32), _I32)
    mask = builder.icmp_signed("<", ir.Constant(ir.VectorType(_I32, LANES), list(range(LANES))), left)
    values = _masked_load(builder, builder.bitcast(builder.gep(data, [whole]), _VECTOR.as_pointer()), mask)
    totals = builder.fadd(totals, builder.select(mask, term(values), _ZEROS))
    return _add_lanes(builder, totals)


def _row(context, builder, array_type, array):
    """The data pointer and length of a 1-d contiguous array."""
    row = context.make_array(array_type)(context, builder, array)
    return row.data, builder.extract_value(row.shape, 0)


def _contiguous_float64(row):
    return isinstance(row, types.Array) and row.dtype == types.float64 and row.ndim == 1 and row.layout == "C"


@intrinsic
def lane_sum(typingctx, row):
    """``sum(row)`` of a contiguous 1-d float64 array, in sixteen lanes (NOTE above)."""
    if not _contiguous_float64(row):
        return None

    def codegen(context, builder, signature, args):
        data, count = _row(context, builder, signature.args[0], args[0])
        return _sum_lanes(builder, data, count, lambda values: values)
    return types.float64(row), codegen


@intrinsic
def lane_square_sum(typingctx, row, center):
    """``sum((row - center) ** 2)`` of a contiguous 1-d float64 array, in sixteen lanes."""
    if not _contiguous_float64(row) or center != types.float64:
        return None

    def codegen(context, builder, signature, args):
        data, count = _row(context, builder, signature.args[0], args[0])
        centers = _splat(builder, args[1], ir.DoubleType())

        def square(values):
            deviations = builder.fsub(values, centers)
            return builder.fmul(deviations, deviations)
        return _sum_lanes(builder, data, count, square)
    return types.float64(row, center), codegen
