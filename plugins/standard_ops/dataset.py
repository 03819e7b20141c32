"""OpDefs of ``tf.data`` iterators: ``MakeIterator`` (an iterator's initializer) and
``IteratorGetNext``.

Contract: an iterator is a resource on its device, named by the ``shared_name`` attr both ops
carry (tensorweave has no resource dtype, so no handle tensor travels between them).
``MakeIterator(components)`` (re)starts that iterator on the pipeline its ``dataset`` attr
describes: a tree of plain-data dicts whose integer fields index `components` (the source
tensors, sizes, counts and the tensors the pipeline's functions capture) and whose functions are
the `FunctionDef` attrs ``f_0`` .. ``f_{MAX_FUNCTIONS - 1}`` it names (see
`tensorweave.plugins.kernels.dataset` for the dict kinds). With ``one_shot`` it starts the
iterator only if it has not been started. ``IteratorGetNext`` gives the next element, typed and
shaped ``output_types``/``output_shapes``. ``IteratorToStringHandle`` gives the iterator's
string handle (a scalar), and ``IteratorGetNextFromStringHandle(string_handle)`` the next element
of the iterator a handle names (a feedable iterator). ``SerializeIterator`` gives the
iterator's position as a string scalar; ``DeserializeIterator(serialized, components)``, with
the attrs of the ``MakeIterator`` whose inputs it takes plus ``initializer`` (that node's name)
and ``initializers`` (every initializer of the iterator), puts a saved position back. All are
stateful: never merged, folded or
pruned into one.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.dataset_functions import FUNCTION_ATTRS
from tensorweave.engine import dtypes
from tensorweave.engine.graph.func_graph import FunctionDef
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec


def _element_specs(ctx: InferContext) -> list[TensorSpec]:
    types, shapes = list(ctx.attr("output_types")), list(ctx.attr("output_shapes"))
    if not types or len(types) != len(shapes):
        raise ctx.type_error(f"{len(types)} output_types and {len(shapes)} output_shapes: an "
                             "element needs one shape per type, and at least one")
    return [TensorSpec(t, s) for t, s in zip(types, shapes)]


def _make_iterator(ctx: InferContext) -> list[TensorSpec]:
    given = [s.dtype for s in ctx.inputs]
    if list(ctx.attr("Tcomponents")) != given:
        raise ctx.type_error(f"attr Tcomponents is {[t.name for t in ctx.attr('Tcomponents')]} "
                             f"but the inputs are {[t.name for t in given]}")
    if not isinstance(ctx.attr("dataset"), dict):
        raise ctx.type_error("attr 'dataset' must be a dataset description (a dict)")
    for name in FUNCTION_ATTRS:
        fn = ctx.attrs.get(name)
        if fn is not None and not isinstance(fn, FunctionDef):
            raise ctx.type_error(f"attr '{name}' must be a function, got {type(fn).__name__}")
    _element_specs(ctx)
    return []


def _deserialize(ctx: InferContext) -> list[TensorSpec]:
    if ctx.shape(0).ndims not in (None, 0):
        raise ctx.shape_error(f"Shape must be rank 0 but is rank {ctx.shape(0).ndims}")
    if list(ctx.attr("Tcomponents")) != [s.dtype for s in ctx.inputs[1:]]:
        raise ctx.type_error("attr Tcomponents does not match the components' dtypes")
    _element_specs(ctx)
    return []


def _handle_next(ctx: InferContext) -> list[TensorSpec]:
    if ctx.shape(0).ndims not in (None, 0):
        raise ctx.shape_error(f"Shape must be rank 0 but is rank {ctx.shape(0).ndims}")
    return _element_specs(ctx)


def register(registry: Any) -> None:
    element = {"shared_name": REQUIRED, "output_types": REQUIRED, "output_shapes": REQUIRED}
    registry.op("MakeIterator", ["components:*"], _make_iterator, stateful=True,
                attrs={**element, "Tcomponents": REQUIRED, "dataset": REQUIRED,
                       "one_shot": False, **dict.fromkeys(FUNCTION_ATTRS)})
    registry.op("IteratorGetNext", [], _element_specs, stateful=True, list_output=True,
                attrs=element)
    registry.op("SerializeIterator", [], lambda ctx: [TensorSpec(dtypes.string, [])],
                stateful=True, attrs={"shared_name": REQUIRED})
    registry.op("DeserializeIterator", ["serialized:string", "components:*"], _deserialize,
                stateful=True,
                attrs={**element, "Tcomponents": REQUIRED, "dataset": REQUIRED,
                       "initializer": REQUIRED, "initializers": REQUIRED,
                       **dict.fromkeys(FUNCTION_ATTRS)})
    registry.op("IteratorToStringHandle", [], lambda ctx: [TensorSpec(dtypes.string, [])],
                stateful=True, attrs={"shared_name": REQUIRED})
    registry.op("IteratorGetNextFromStringHandle", ["string_handle:string"], _handle_next,
                stateful=True, list_output=True,
                attrs={"output_types": REQUIRED, "output_shapes": REQUIRED})
