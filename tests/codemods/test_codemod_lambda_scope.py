"""A name read inside a lambda, followed back to the lambda's parameter (its default): the
lambda's body is an expression, not a statement list. The form of Cerebras/modelzoo's
modelzoo/common/tf/optimizers/Trainer.py at 4e2a4e0 (a learning-rate schedule per parameter
set, each in a lambda with defaults), where every target crashed with "TypeError: 'Call' object
is not iterable" and left the file unchanged."""

import ast

import pytest

from codemods.apply.engine import migrate
from codemods.meaning.holders import blocks_around

SOURCE = """import tensorflow as tf
from tensorflow.python.training.experimental.loss_scale_optimizer import (
    MixedPrecisionLossScaleOptimizer,
)


class Trainer:
    def __init__(self, params):
        self.params = params
        self.opt = self.make()
        if isinstance(self.opt, MixedPrecisionLossScaleOptimizer):
            print(self.opt.loss_scale)

    def make(self):
        rate = self.rate()
        opt = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=rate)
        return opt

    def rate(self):
        def decay(params, step):
            return tf.compat.v1.train.cosine_decay(learning_rate=params["lr"], global_step=step)

        if len(self.params) == 1:
            return decay(self.params[0], 0)
        for params in self.params:
            later = lambda p=params: decay(p, 0)
        return later()
"""


@pytest.mark.parametrize("target", ["keras2", "keras3", "shim"])
def test_a_lambda_parameter_followed_into_a_function_does_not_crash(target):
    result = migrate(SOURCE, target)
    assert ast.parse(result.text) is not None


def test_blocks_around_a_lambda_holds_no_statement_list():
    [assign] = ast.parse("f = lambda p=1: g(p)\n").body
    assert isinstance(assign, ast.Assign)
    lam = assign.value
    assert isinstance(lam, ast.Lambda)
    assert blocks_around(lam, (1, 16)) == set()
