"""The function attrs of the dataset ops: a pipeline's map/filter/flat_map functions travel as
``f_0`` .. ``f_{MAX_FUNCTIONS - 1}`` of the iterator op that builds it."""

MAX_FUNCTIONS = 16
FUNCTION_ATTRS = tuple(f"f_{i}" for i in range(MAX_FUNCTIONS))
