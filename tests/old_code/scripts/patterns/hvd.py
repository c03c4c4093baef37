"""A one-process stand-in for the parts of `horovod.tensorflow` the pattern scripts use.

Horovod is not installed here; the scripts import this module as `hvd` so that their lines read
as the real code's do. Each function does what Horovod does with one process (size 1, rank 0),
as horovod/horovod@27deeb996c4d07b307cb6da68100212d73047237, horovod/tensorflow/__init__.py
defines it: `DistributedGradientTape(tape)` returns a tape whose `gradient` all-reduces with the
default op, Average (the sum over one replica divided by one); `allreduce` the same on one
tensor; `broadcast_variables(variables, root_rank)` assigns each variable rank 0's value (its
own): it reads every variable it is given, so a wrong kind of argument fails here as it does
there.
"""

import tensorflow as tf


def init():
    pass


def size():
    return 1


def rank():
    return 0


def allreduce(tensor, average=None, name=None, compression=None, op=None):
    return tf.math.truediv(tensor, tf.cast(size(), tensor.dtype))


class _DistributedGradientTape(tf.GradientTape):
    """Horovod's tape: the same recording, gradients all-reduced before they are returned."""

    def __init__(self, tape):
        self.__dict__.update(tape.__dict__)

    def gradient(self, target, sources, output_gradients=None, **kwargs):
        gradients = super().gradient(target, sources, output_gradients, **kwargs)
        return [None if g is None else allreduce(g) for g in gradients]


def DistributedGradientTape(gradtape, device_dense="", device_sparse="", compression=None, sparse_as_dense=False, op=None):  # noqa: N802, horovod's name
    return _DistributedGradientTape(gradtape)


def broadcast_variables(variables, root_rank):
    for variable in variables:
        variable.assign(tf.identity(variable))
