"""``tw.keras.layers``: the Keras layer classes."""

from tensorweave.keras.base_layer import Layer
from tensorweave.keras.convolutional import AveragePooling2D, Conv2D, MaxPooling2D
from tensorweave.keras.convolutional3d import *  # noqa: F403
from tensorweave.keras.convolutional3d import __all__ as _conv3d_names
from tensorweave.keras.core_layers import (
    Activation,
    Dense,
    Dropout,
    Flatten,
    Input,
    InputLayer,
    Reshape,
)
from tensorweave.keras.embeddings import Embedding
from tensorweave.keras.merge import Add, Concatenate, add, concatenate
from tensorweave.keras.normalization import BatchNormalization
from tensorweave.keras.recurrent import GRU, LSTM, SimpleRNN

# Keras's aliases
Convolution2D = Conv2D
MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D

__all__ = [
    "GRU", "LSTM", "Activation", "Add", "AveragePooling2D", "AvgPool2D", "BatchNormalization",
    "Concatenate", "Conv2D", "Convolution2D", "Dense", "Dropout", "Embedding", "Flatten",
    "Input", "InputLayer", "Layer", "MaxPool2D", "MaxPooling2D", "Reshape", "SimpleRNN", "add",
    "concatenate",
]
__all__ += _conv3d_names
