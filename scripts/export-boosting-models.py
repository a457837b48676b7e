#!/usr/bin/env python3
"""Exports a fixed set of gradient-boosting models as the other converters users have write them:
LightGBM and XGBoost through onnxmltools (convert_lightgbm / convert_xgboost), CatBoost through
its own exporter (save_model(format="onnx")), and scikit-learn pipelines with a LightGBM or
XGBoost step through skl2onnx (the onnxmltools converters registered with it). Each goes into
OUTDIR/<name>/model.onnx with inputs and ONNX Runtime's outputs (.npy) on rows of a dataset
(iris, wine, breast_cancer, diabetes, and a seeded synthetic table with categorical columns;
some with NaN for missing values), and OUTDIR/index.json in the format that
tests/realmodels/CorpusRunner.cpp reads. Seeded: a rerun writes the same inputs and outputs for the
same package versions (the model files differ only in metadata: onnxmltools' random graph names,
CatBoost's training time and GUID).

Classifiers are exported without ZipMap (onnxmltools: zipmap=False). CatBoost has no such option:
its classifiers are saved as CatBoost writes them (a ZipMap after the tree ensemble), then
converted the way a user does (the ZipMap deleted, its input renamed to the graph output it fed).
The models as the converters write them with ZipMap, and with string class labels, are entries
with "load_error": the runtime must refuse them with an error that names the node and the fix.
Left out because the converter fails or writes a model ONNX Runtime cannot load: LightGBM
cross_entropy, XGBoost binary:logitraw, dart and gblinear (onnxmltools 1.16 raises), CatBoost
MultiRMSE (its exporter writes a classifier without classes) and CatBoost's non-symmetric trees
(Depthwise, Lossguide: its exporter refuses them).

    export-boosting-models.py OUTDIR [--only NAME,...]
"""
import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import lightgbm
import onnxmltools
import sklearn
import skl2onnx
import xgboost
from onnxmltools import convert_lightgbm, convert_xgboost
from onnxmltools.convert.common.data_types import DoubleTensorType, FloatTensorType, Int64TensorType
from onnxmltools.convert.lightgbm.operator_converters.LightGbm import convert_lightgbm as lgbm_op_converter
from onnxmltools.convert.xgboost.operator_converters.XGBoost import convert_xgboost as xgb_op_converter
from skl2onnx import to_onnx, update_registered_converter
from skl2onnx.common.shape_calculator import (calculate_linear_classifier_output_shapes,
                                              calculate_linear_regressor_output_shapes)
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

try:
    import catboost
except ImportError:  # export-boosting-models.sh could not install it: its models are left out
    catboost = None

warnings.filterwarnings("ignore")
OPSET = 15  # the highest onnxmltools 1.16 converts to
TOLERANCE = 1e-5  # max|ours - ORT| / max|ORT| for float outputs; labels must match exactly

update_registered_converter(lightgbm.LGBMClassifier, "LightGbmLGBMClassifier", calculate_linear_classifier_output_shapes,
                            lgbm_op_converter, options={"nocl": [True, False], "zipmap": [True, False]})
update_registered_converter(xgboost.XGBRegressor, "XGBoostXGBRegressor", calculate_linear_regressor_output_shapes,
                            xgb_op_converter)


def data(name):
    """X (float32) and y of a dataset. iris_mm: iris in whole millimetres (integer valued, for
    int64 inputs); iris_names: iris with the species names as labels; categorical: 600 seeded
    rows, columns 0 and 1 category codes (8 and 4 values), 2 and 3 normal; y from per-category
    effects plus column 2."""
    if name == "categorical":
        rng = np.random.RandomState(0)
        n = 600
        X = np.zeros((n, 4), np.float32)
        X[:, 0] = rng.randint(0, 8, n)
        X[:, 1] = rng.randint(0, 4, n)
        X[:, 2:] = rng.randn(n, 2)
        effect = (np.array([0.0, 2.0, -1.0, 0.5, 3.0, -2.0, 1.0, 0.0])[X[:, 0].astype(int)] +
                  np.array([0.0, 1.0, -1.0, 0.5])[X[:, 1].astype(int)])
        score = effect + X[:, 2] + 0.3 * rng.randn(n)
        return X, np.digitize(score, [-0.5, 1.0])  # three classes
    if name == "iris_mm":
        X, y = data("iris")
        return np.round(X * 10), y
    if name == "iris_names":
        X, y = data("iris")
        return X, np.array(["setosa", "versicolor", "virginica"])[y]
    X, y = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer,
            "diabetes": load_diabetes}[name](return_X_y=True)
    return X.astype(np.float32), y


def with_missing(X, seed=7):
    """X with about one value in eight replaced by NaN."""
    rng = np.random.RandomState(seed)
    X = X.copy()
    X[rng.rand(*X.shape) < 0.125] = np.nan
    return X


def input_type(X, tensor_type=FloatTensorType):
    return [("input", tensor_type([None, X.shape[1]]))]


def strip_zipmap(m):
    """m with its ZipMap removed as a user does: the producer of the ZipMap's input writes the
    graph output the ZipMap wrote, now a [N, classes] float tensor."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    (zm,) = [n for n in m.graph.node if n.op_type == "ZipMap"]
    for n in m.graph.node:
        for i, o in enumerate(n.output):
            if o == zm.input[0]:
                n.output[i] = zm.output[0]
    for i, o in enumerate(m.graph.output):
        if o.name == zm.output[0]:
            m.graph.output[i].CopyFrom(onnx.helper.make_tensor_value_info(o.name, onnx.TensorProto.FLOAT, [None, None]))
    m.graph.node.remove(zm)
    onnx.checker.check_model(m)
    return m


def catboost_onnx(est):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        est.save_model(path, format="onnx")
        return onnx.load(path)


def lgbm(zipmap=False, tensor_type=FloatTensorType, **kw):
    return lambda est, X: convert_lightgbm(est, initial_types=input_type(X, tensor_type), target_opset=OPSET,
                                           zipmap=zipmap, **kw)


def xgb(est, X, tensor_type=FloatTensorType):
    return convert_xgboost(est, initial_types=input_type(X, tensor_type), target_opset=OPSET)


def skl(est, X):
    return to_onnx(est, X[:1], target_opset={"": OPSET, "ai.onnx.ml": 1},
                   options={id(est.steps[-1][1]): {"zipmap": False}} if sklearn.base.is_classifier(est) else None)


def cb(est, X):
    m = catboost_onnx(est)
    return strip_zipmap(m) if any(n.op_type == "ZipMap" for n in m.graph.node) else m


def models():
    """(name, dataset, estimator, fit keyword arguments, NaN in X, converter, source, load_error):
    load_error lists what the runtime's load error must say (the model is not run)."""
    L, X, C = lightgbm, xgboost, catboost
    lgb_cls = lambda **kw: L.LGBMClassifier(n_estimators=20, num_leaves=15, min_child_samples=5, verbose=-1,
                                            random_state=0, **kw)
    cat_fit = {"categorical_feature": [0, 1]}
    cat_kw = {"max_cat_to_onehot": 2, "min_data_per_group": 5, "cat_smooth": 1.0}
    cb_kw = {"iterations": 20, "depth": 4, "verbose": 0, "random_seed": 0, "allow_writing_files": False}
    zipmap_error = ["(ZipMap)", "zipmap=False", "CatBoost", "rename its input"]
    label_error = ["(TreeEnsembleClassifier)", "classlabels_strings", "integer class labels"]
    return [
        ("lgbm_breast_cancer_binary", "breast_cancer", lgb_cls(), {}, False, lgbm(), "lightgbm", None),
        ("lgbm_breast_cancer_binary_nan", "breast_cancer", lgb_cls(), {}, True, lgbm(), "lightgbm", None),
        ("lgbm_iris_multiclass", "iris", lgb_cls(), {}, False, lgbm(), "lightgbm", None),
        ("lgbm_wine_multiclass_nan", "wine", lgb_cls(), {}, True, lgbm(), "lightgbm", None),
        ("lgbm_wine_multiclass_ova", "wine", lgb_cls(objective="multiclassova"), {}, False, lgbm(), "lightgbm",
         None),
        ("lgbm_diabetes_regression", "diabetes", L.LGBMRegressor(n_estimators=30, num_leaves=15, verbose=-1,
                                                                  random_state=0), {}, False, lgbm(), "lightgbm",
         None),
        ("lgbm_diabetes_regression_nan_split", "diabetes",
         L.LGBMRegressor(n_estimators=30, num_leaves=15, verbose=-1, random_state=0), {}, True, lgbm(split=10),
         "lightgbm", None),
        ("lgbm_categorical_multiclass", "categorical", lgb_cls(**cat_kw), cat_fit, False, lgbm(), "lightgbm", None),
        ("lgbm_categorical_regression", "categorical",
         L.LGBMRegressor(n_estimators=20, num_leaves=15, verbose=-1, random_state=0, **cat_kw), cat_fit, False,
         lgbm(), "lightgbm", None),
        ("lgbm_diabetes_poisson", "diabetes", L.LGBMRegressor(objective="poisson", n_estimators=20, verbose=-1,
                                                               random_state=0), {}, False, lgbm(), "lightgbm", None),
        ("lgbm_breast_cancer_random_forest", "breast_cancer",
         lgb_cls(boosting_type="rf", subsample=0.7, subsample_freq=1), {}, True, lgbm(), "lightgbm", None),
        ("lgbm_iris_booster", "iris", lgb_cls(), {}, False, lambda est, X: lgbm()(est.booster_, X), "lightgbm", None),
        ("lgbm_breast_cancer_zero_as_missing", "breast_cancer", lgb_cls(zero_as_missing=True), {}, True, lgbm(),
         "lightgbm", None),
        ("lgbm_categorical_multiclass_nan", "categorical", lgb_cls(**cat_kw), cat_fit, True, lgbm(), "lightgbm",
         None),
        ("lgbm_iris_int64_input", "iris_mm", lgb_cls(), {}, False, lgbm(tensor_type=Int64TensorType), "lightgbm",
         None),
        ("lgbm_breast_cancer_binary_zipmap", "breast_cancer", lgb_cls(), {}, False, lgbm(zipmap=True), "lightgbm",
         zipmap_error),
        ("lgbm_iris_string_labels", "iris_names", lgb_cls(), {}, False, lgbm(), "lightgbm", label_error),
        ("xgb_breast_cancer_logistic", "breast_cancer",
         X.XGBClassifier(n_estimators=20, max_depth=3, objective="binary:logistic", random_state=0), {}, False, xgb,
         "xgboost", None),
        ("xgb_breast_cancer_logistic_nan", "breast_cancer",
         X.XGBClassifier(n_estimators=20, max_depth=3, random_state=0), {}, True, xgb, "xgboost", None),
        ("xgb_iris_softprob", "iris",
         X.XGBClassifier(n_estimators=15, max_depth=3, objective="multi:softprob", random_state=0), {}, False, xgb,
         "xgboost", None),
        ("xgb_wine_softprob_nan", "wine", X.XGBClassifier(n_estimators=15, max_depth=3, random_state=0), {}, True,
         xgb, "xgboost", None),
        ("xgb_diabetes_squarederror", "diabetes",
         X.XGBRegressor(n_estimators=30, max_depth=4, objective="reg:squarederror", random_state=0), {}, False, xgb,
         "xgboost", None),
        ("xgb_breast_cancer_random_forest", "breast_cancer", X.XGBRFClassifier(n_estimators=10, max_depth=4,
                                                                               random_state=0), {}, True, xgb,
         "xgboost", None),
        ("xgb_diabetes_poisson", "diabetes", X.XGBRegressor(n_estimators=20, max_depth=3, objective="count:poisson",
                                                            random_state=0), {}, False, xgb, "xgboost", None),
        ("xgb_wine_lossguide", "wine", X.XGBClassifier(n_estimators=10, max_depth=0, max_leaves=8,
                                                       grow_policy="lossguide", random_state=0), {}, True, xgb,
         "xgboost", None),
        ("xgb_diabetes_double_input", "diabetes", X.XGBRegressor(n_estimators=20, max_depth=3, random_state=0), {},
         True, lambda est, X: xgb(est, X, DoubleTensorType), "xgboost", None),
        ("xgb_diabetes_base_score", "diabetes",
         X.XGBRegressor(n_estimators=30, max_depth=4, base_score=150.0, random_state=0), {}, True, xgb, "xgboost",
         None),
        ("skl_pipeline_scaler_lgbm", "wine", make_pipeline(StandardScaler(), lgb_cls()), {}, False, skl,
         "lightgbm", None),
        ("skl_pipeline_scaler_xgb_regressor", "diabetes",
         make_pipeline(StandardScaler(), X.XGBRegressor(n_estimators=20, max_depth=3, random_state=0)), {}, False, skl,
         "xgboost", None),
    ] + ([] if catboost is None else [
        ("catboost_breast_cancer_binary", "breast_cancer", C.CatBoostClassifier(**cb_kw), {}, False, cb, "catboost",
         None),
        ("catboost_iris_multiclass", "iris", C.CatBoostClassifier(loss_function="MultiClass", **cb_kw), {}, False,
         cb, "catboost", None),
        ("catboost_diabetes_regression", "diabetes", C.CatBoostRegressor(**cb_kw), {}, False, cb, "catboost", None),
        ("catboost_breast_cancer_binary_nan", "breast_cancer", C.CatBoostClassifier(**cb_kw), {}, True, cb,
         "catboost", None),
        ("catboost_wine_multiclass_nan_max", "wine",
         C.CatBoostClassifier(loss_function="MultiClass", nan_mode="Max", **cb_kw), {}, True, cb, "catboost", None),
        ("catboost_iris_string_labels", "iris_names", C.CatBoostClassifier(loss_function="MultiClass", **cb_kw), {},
         False, cb, "catboost", label_error),
        ("catboost_breast_cancer_binary_zipmap", "breast_cancer", C.CatBoostClassifier(**cb_kw), {}, False,
         lambda est, X: catboost_onnx(est), "catboost", zipmap_error),
    ])


def versions(lib):
    if lib == "catboost":
        return "CatBoost %s (save_model format=onnx)" % catboost.__version__
    library = {"lightgbm": lightgbm, "xgboost": xgboost}[lib]
    return "%s %s, onnxmltools %s" % ({"lightgbm": "LightGBM", "xgboost": "XGBoost"}[lib], library.__version__,
                                      onnxmltools.__version__)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", default="", help="comma-separated model names")
    args = ap.parse_args()
    out = os.path.abspath(args.outdir)
    os.makedirs(out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    entries = []
    if catboost is None:
        print("note: catboost is not installed: the CatBoost models are left out", flush=True)
    for name, ds, est, fit_kw, nan, convert, lib, load_error in models():
        if only and name not in only:
            continue
        X, y = data(ds)
        if nan:
            X = with_missing(X)
        est.fit(X, y, **fit_kw)
        onx = convert(est, X)
        ops = collections.Counter((n.domain or "ai.onnx") + ":" + n.op_type for n in onx.graph.node)
        if load_error is None and any(op.endswith(":ZipMap") for op in ops):
            sys.exit("error: %s still has a ZipMap" % name)
        folder = os.path.join(out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        onnx.save(onx, os.path.join(folder, "model.onnx"))
        what = ("scikit-learn %s pipeline %s" % (sklearn.__version__, " + ".join(type(s).__name__ for _, s in est.steps))
                if convert is skl else type(est).__name__)
        source = "%s on %s%s, %s" % (what, ds, " with NaN" if nan else "", versions(lib))
        if convert is skl:
            source += ", skl2onnx %s" % skl2onnx.__version__
        entry = {"name": name, "model": "%s/model.onnx" % name, "source": source, "tolerance": TOLERANCE}
        sess = ort.InferenceSession(os.path.join(folder, "model.onnx"), providers=["CPUExecutionProvider"])
        if load_error is not None:
            entry["load_error"] = load_error
            entry["cases"] = []
        else:
            # 40 rows spread over the dataset (every class), one row alone, and every row (several
            # blocks of rows, split between threads).
            rows = np.linspace(0, len(X) - 1, 40).astype(np.int64)
            entry["cases"] = []
            for case, idx in (("rows", rows), ("one_row", rows[7:8]), ("all_rows", np.arange(len(X)))):
                os.makedirs(os.path.join(folder, case))
                dtype = onnx.helper.tensor_dtype_to_np_dtype(onx.graph.input[0].type.tensor_type.elem_type)
                feeds = {sess.get_inputs()[0].name: np.ascontiguousarray(X[idx].astype(dtype))}
                step = {"inputs": {}, "outputs": {}}
                for k, v in feeds.items():
                    np.save(os.path.join(folder, case, "in_%s.npy" % k), v)
                    step["inputs"][k] = "%s/%s/in_%s.npy" % (name, case, k)
                for o, v in zip(sess.get_outputs(), sess.run(None, feeds)):
                    np.save(os.path.join(folder, case, "out_%s.npy" % o.name), v)
                    step["outputs"][o.name] = "%s/%s/out_%s.npy" % (name, case, o.name)
                entry["cases"].append({"name": case, "steps": [step]})
        entries.append(entry)
        print("%-38s %s%s" % (name, ", ".join("%s x%d" % (k.replace("ai.onnx.ml:", "ml:").replace("ai.onnx:", ""), v)
                                              for k, v in sorted(ops.items())),
                              " (must not load)" if load_error else ""), flush=True)
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"models": entries}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
