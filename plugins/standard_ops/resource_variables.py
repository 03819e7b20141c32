"""OpDefs of resource variables (TF's ``resource_variable_ops.cc`` and the ``Resource*`` training
ops): ``VarHandleOp``, ``ReadVariableOp``, ``AssignVariableOp``, ``AssignAddVariableOp``,
``AssignSubVariableOp``, ``VarIsInitializedOp``, ``VariableShape``, ``ResourceGather``,
``ResourceScatter{Update,Add,Sub,Mul,Div,Min,Max}``, ``ResourceScatterNd{Update,Add,Sub}``,
``DestroyResourceOp``, and a
``ResourceApply*``/``ResourceSparseApply*`` for every fused ``Apply*``/``SparseApply*`` update.

Contract: ``VarHandleOp`` outputs a scalar ``resource`` handle whose `TensorSpec.handle` is the
variable's declared dtype and shape; every other op takes the handle as input 0 (so it is placed
where the variable lives) and reads its static shape from there. Reads and gathers output the
variable's dtype (attr ``dtype``, which must be the handle's); assignments, scatters and
updates have no outputs, as in TF. A value whose shape cannot fit the variable's declared shape
is a ``ValueError`` at construction; a dtype that differs from the handle's is a ``TypeError``.
Gradients: ``ReadVariableOp`` passes its gradient to the handle (the variable), and
``ResourceGather`` gives `IndexedSlices` of the gathered rows, as ``GatherV2`` does.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.api.indexed_slices import IndexedSlices, to_dense
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape, format_dims
from tensorweave.plugins.standard_ops.scatter import _scatter_nd as scatter_nd_shape
from tensorweave.plugins.standard_ops.training import (
    SPARSE_UPDATES,
    UPDATES,
    _sparse_update,
    _update,
)

SCATTER_OPS = ("ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub",
               "ResourceScatterMul", "ResourceScatterDiv", "ResourceScatterMin",
               "ResourceScatterMax")
# TF's ResourceScatterNd* name their value type T, as the ref ScatterNd* ops do
SCATTER_ND_OPS = ("ResourceScatterNdUpdate", "ResourceScatterNdAdd", "ResourceScatterNdSub")
ASSIGN_OPS = ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp")
# the ops of TF's training_ops that take the variable and its slots as handles
RESOURCE_UPDATES = {f"Resource{name}": name for name in (*UPDATES, *SPARSE_UPDATES)}
_HANDLE = "resource:resource"


def handle_spec(ctx: InferContext, i: int = 0) -> TensorSpec:
    """The dtype and shape of the variable behind handle input `i` (unknown shape, and the
    op's ``dtype`` attr, when the handle carries none); a dtype that differs from the op's is a
    ``TypeError``."""
    spec = ctx.inputs[i].handle
    want = ctx.attrs.get("dtype", ctx.attrs.get("T"))
    if spec is None:
        return TensorSpec(want, TensorShape(None))
    if want is not None and spec.dtype != want:
        raise ctx.type_error(f"Trying to use variable of dtype {spec.dtype.name} as "
                             f"{dtypes.as_dtype(want).name}")
    return spec


def _var_handle(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(dtypes.resource, TensorShape([]),
                       TensorSpec(ctx.attr("dtype"), TensorShape(ctx.attr("shape"))))]


def _read(ctx: InferContext) -> list[TensorSpec]:
    spec = handle_spec(ctx)
    return [TensorSpec(spec.dtype, spec.shape)]


def _assign(ctx: InferContext) -> list[TensorSpec]:
    shape = handle_spec(ctx).shape
    if not shape.is_compatible_with(ctx.shape(1)):
        raise ctx.shape_error(f"Shapes of variable {format_dims(shape)} and value "
                              f"{format_dims(ctx.shape(1))} are incompatible")
    return []


def _variable_shape(ctx: InferContext) -> list[TensorSpec]:
    shape = ctx.inputs[0].handle.shape if ctx.inputs[0].handle else TensorShape(None)
    return [TensorSpec(ctx.attr("out_type"), TensorShape([shape.ndims]))]


def _gather(ctx: InferContext) -> list[TensorSpec]:
    spec = handle_spec(ctx)
    if ctx.attr("batch_dims"):
        raise ctx.shape_error("ResourceGather supports batch_dims = 0 only")
    if spec.shape.ndims == 0:
        raise ctx.shape_error("params must be at least 1 dimensional")
    rest = spec.shape[1:] if spec.shape.ndims is not None else TensorShape(None)
    return [TensorSpec(spec.dtype, ctx.shape(1).concatenate(rest))]


def _scatter(ctx: InferContext) -> list[TensorSpec]:
    var, indices, updates = handle_spec(ctx).shape, ctx.shape(1), ctx.shape(2)
    if updates.ndims != 0 and var.ndims is not None and indices.ndims is not None:
        expected = indices.concatenate(var[1:])
        if not expected.is_compatible_with(updates):
            raise ctx.shape_error(
                f"Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = "
                f"[], got updates.shape {format_dims(updates)}, indices.shape "
                f"{format_dims(indices)}, params.shape {format_dims(var)}")
    return []


def _resource_update(name: str, refs: int, dense_infer: Any) -> Any:
    """The dense update's checks, with each handle standing for its variable."""

    def infer(ctx: InferContext) -> list[TensorSpec]:
        inputs = [handle_spec(ctx, i) if i < refs else spec
                  for i, spec in enumerate(ctx.inputs)]
        dense_infer(InferContext(ctx.node_name, ctx.op, inputs, ctx.attrs, ctx.value_of))
        return []

    infer.__name__ = f"_infer_{name}"
    return infer


def register(registry: Any) -> None:
    registry.op("VarHandleOp", [], _var_handle, stateful=True,
                attrs={"container": "", "shared_name": "", "dtype": REQUIRED,
                       "shape": REQUIRED, "allowed_devices": []})
    registry.op("ReadVariableOp", [_HANDLE], _read, stateful=True, attrs={"dtype": REQUIRED})
    registry.op("AssignVariableOp", [_HANDLE, "value:dtype"], _assign, stateful=True,
                attrs={"dtype": REQUIRED, "validate_shape": False})
    for name in ASSIGN_OPS[1:]:
        registry.op(name, [_HANDLE, "value:dtype"], _assign, stateful=True,
                    attrs={"dtype": REQUIRED},
                    type_constraints={"dtype": dtypes.NUMERIC | dtypes.COMPLEX})
    registry.op("VarIsInitializedOp", [_HANDLE],
                lambda ctx: [TensorSpec(dtypes.bool_, TensorShape([]))], stateful=True)
    registry.op("VariableShape", ["input:resource"], _variable_shape, stateful=True,
                attrs={"out_type": dtypes.int32}, type_constraints={"out_type": dtypes.INDEX})
    registry.op("ResourceGather", [_HANDLE, "indices:Tindices"], _gather, stateful=True,
                attrs={"batch_dims": 0, "validate_indices": True, "dtype": REQUIRED,
                       "Tindices": REQUIRED},
                type_constraints={"Tindices": dtypes.INDEX})
    for name in SCATTER_OPS:
        registry.op(name, [_HANDLE, "indices:Tindices", "updates:dtype"], _scatter,
                    stateful=True, attrs={"dtype": REQUIRED, "Tindices": REQUIRED},
                    type_constraints={"Tindices": dtypes.INDEX,
                                      **({} if name == "ResourceScatterUpdate"
                                         else {"dtype": dtypes.NUMERIC})})
    for name in SCATTER_ND_OPS:
        registry.op(name, [_HANDLE, "indices:Tindices", "updates:T"],
                    _resource_update(name, 1, scatter_nd_shape), stateful=True,
                    attrs={"T": REQUIRED, "Tindices": REQUIRED, "use_locking": True},
                    type_constraints={"Tindices": dtypes.INDEX,
                                      **({} if name == "ResourceScatterNdUpdate"
                                         else {"T": dtypes.NUMERIC})})
    registry.op("DestroyResourceOp", [_HANDLE], lambda ctx: [], stateful=True,
                attrs={"ignore_lookup_error": True})
    for name, (inputs, refs, extra) in UPDATES.items():
        registry.op(f"Resource{name}",
                    [_HANDLE if i < refs else f"{n}:T" for i, n in enumerate(inputs)],
                    _resource_update(name, refs, _update(inputs, refs)),
                    attrs={"T": REQUIRED, "use_locking": False, **extra},
                    type_constraints={"T": dtypes.FLOATS}, stateful=True)
    for name, (inputs, refs, extra) in SPARSE_UPDATES.items():
        registry.op(f"Resource{name}",
                    [_HANDLE if i < refs else f"{n}:Tindices" if n == "indices" else f"{n}:T"
                     for i, n in enumerate(inputs)],
                    _resource_update(name, refs, _sparse_update(inputs, refs)),
                    attrs={"T": REQUIRED, "Tindices": None, "use_locking": False, **extra},
                    type_constraints={"T": dtypes.FLOATS, "Tindices": dtypes.INDEX},
                    stateful=True)


def _read_grad(op: Operation, grad: Tensor | IndexedSlices) -> list[Any]:
    return [grad]


def _gather_grad(op: Operation, grad: Tensor | IndexedSlices) -> list[Any]:
    """The gathered rows as `IndexedSlices` of the variable, its shape taken where it lives."""
    handle, indices = op.inputs
    grad = to_dense(grad)
    with op.graph.colocate_with(handle.op):
        params_shape = apply("VariableShape", [handle])
    size = array_ops.expand_dims(array_ops.size(indices), 0)
    rows = array_ops.concat([size, params_shape[1:]], 0)
    return [IndexedSlices(array_ops.reshape(grad, rows), array_ops.reshape(indices, size),
                          params_shape), None]


def register_gradients(registry: Any) -> None:
    registry.add("ReadVariableOp", _read_grad)
    registry.add("ResourceGather", _gather_grad)
    for name in ("VarHandleOp", "VarIsInitializedOp", "VariableShape"):
        registry.add(name, None)
