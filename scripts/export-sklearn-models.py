#!/usr/bin/env python3
"""Exports a fixed set of fitted scikit-learn models with skl2onnx (the ai.onnx.ml ops: tree
ensembles, linear models, SVMs, scalers, imputers, one-hot encoding, binarizer, normalizer) into
OUTDIR/<name>/model.onnx, runs them with ONNX Runtime on rows of their dataset (iris, wine,
breast_cancer, diabetes; seeded, so every rerun writes the same files for the same package
versions) and writes inputs, ORT's outputs (.npy) and OUTDIR/index.json in the format that
tests/realmodels/CorpusRunner.cpp reads. Classifiers are exported with zipmap=False (a ZipMap's
sequence of maps has no tensor type in the runtime's API): outputs are the label tensor and the
probability (or score) matrix. HistGradientBoosting is left out: skl2onnx 1.20 fails to convert
it from scikit-learn 1.9.

    export-sklearn-models.py OUTDIR [--only NAME,...]
"""
import argparse
import collections
import json
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import sklearn
import skl2onnx
from skl2onnx import to_onnx
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.ensemble import (ExtraTreesClassifier, GradientBoostingClassifier, GradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge, SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Binarizer, MaxAbsScaler, MinMaxScaler, Normalizer, OneHotEncoder, StandardScaler
from sklearn.svm import SVC, SVR
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

warnings.filterwarnings("ignore")
OPSETS = {"": 17, "ai.onnx.ml": 3}
TOLERANCE = 1e-5  # max|ours - ORT| / max|ORT| for float outputs; labels must match exactly


def data(name):
    """X (float32) and y of a scikit-learn dataset; diabetes_two_targets: y and sqrt(y)."""
    two = name == "diabetes_two_targets"
    X, y = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer,
            "diabetes": load_diabetes, "diabetes_two_targets": load_diabetes}[name](return_X_y=True)
    if two:
        y = np.stack([y, np.sqrt(y)], axis=1)
    return X.astype(np.float32), y


def with_missing(X, seed):
    """X with about one value in eight replaced by NaN (for the imputer pipelines)."""
    rng = np.random.RandomState(seed)
    X = X.copy()
    X[rng.rand(*X.shape) < 0.125] = np.nan
    return X


def codes(X):
    """Small integer codes of X's columns (for the one-hot pipelines): quartiles 0..3."""
    q = np.quantile(X, [0.25, 0.5, 0.75], axis=0)
    return np.sum(X[None, :, :] > q[:, None, :], axis=0).astype(np.int64)


def mixed(X):
    """Iris with the petal columns as quartile codes (categorical, one-hot encoded) and NaN in the
    sepal columns (imputed): the ColumnTransformer pipeline's input."""
    X = with_missing(X, 11)
    X[:, 2:] = codes(np.nan_to_num(X[:, 2:], nan=0.0)).astype(np.float32)
    return X


def models():
    """(name, dataset, estimator, transform of the dataset's X before fitting and running)"""
    nan = lambda X: with_missing(X, 7)
    return [
        ("iris_logreg", "iris", make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)), None),
        ("iris_decision_tree", "iris", DecisionTreeClassifier(max_depth=4, random_state=0), None),
        ("iris_random_forest", "iris", RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0), None),
        ("iris_extra_trees", "iris", ExtraTreesClassifier(n_estimators=8, max_depth=4, random_state=0), None),
        ("iris_gradient_boosting", "iris", GradientBoostingClassifier(n_estimators=20, random_state=0), None),
        ("iris_svc_rbf", "iris", make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)), None),
        ("iris_svc_poly", "iris", SVC(kernel="poly", degree=3, probability=True, random_state=0), None),
        ("iris_svc_linear", "iris", SVC(kernel="linear", random_state=0), None),
        ("iris_sgd_minmax", "iris", make_pipeline(MinMaxScaler(), SGDClassifier(random_state=0)), None),
        ("iris_imputer_logreg", "iris", make_pipeline(SimpleImputer(strategy="mean"), StandardScaler(),
                                                       LogisticRegression(max_iter=500)), nan),
        ("iris_onehot_logreg", "iris", make_pipeline(OneHotEncoder(handle_unknown="ignore"),
                                                      LogisticRegression(max_iter=500)), codes),
        ("iris_column_transformer", "iris",
         make_pipeline(ColumnTransformer([("num", make_pipeline(SimpleImputer(), StandardScaler()), [0, 1]),
                                          ("cat", OneHotEncoder(handle_unknown="ignore"), [2, 3])]),
                       LogisticRegression(max_iter=500)), mixed),
        ("wine_gradient_boosting", "wine", GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0),
         None),
        ("wine_normalizer_svc", "wine", make_pipeline(Normalizer(norm="l2"), SVC(probability=True, random_state=0)),
         None),
        ("wine_maxabs_logreg", "wine", make_pipeline(MaxAbsScaler(), LogisticRegression(max_iter=1000)), None),
        ("breast_cancer_random_forest", "breast_cancer",
         RandomForestClassifier(n_estimators=12, max_depth=6, random_state=0), None),
        ("breast_cancer_gradient_boosting", "breast_cancer",
         GradientBoostingClassifier(n_estimators=15, random_state=0), None),
        ("breast_cancer_decision_tree", "breast_cancer", DecisionTreeClassifier(max_depth=5, random_state=0), None),
        ("breast_cancer_logreg", "breast_cancer", make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)),
         None),
        ("breast_cancer_svc_sigmoid", "breast_cancer",
         make_pipeline(StandardScaler(), SVC(kernel="sigmoid", probability=True, random_state=0)), None),
        ("breast_cancer_binarizer_logreg", "breast_cancer",
         make_pipeline(StandardScaler(), Binarizer(threshold=0.0), LogisticRegression(max_iter=500)), None),
        ("diabetes_linear", "diabetes", LinearRegression(), None),
        ("diabetes_ridge_imputer", "diabetes", make_pipeline(SimpleImputer(strategy="median"), Ridge(alpha=0.5)),
         nan),
        ("diabetes_decision_tree", "diabetes", DecisionTreeRegressor(max_depth=5, random_state=0), None),
        ("diabetes_random_forest", "diabetes", RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0),
         None),
        ("diabetes_two_target_forest", "diabetes_two_targets",
         RandomForestRegressor(n_estimators=6, max_depth=5, random_state=0), None),
        ("diabetes_gradient_boosting", "diabetes", GradientBoostingRegressor(n_estimators=20, random_state=0), None),
        ("diabetes_svr", "diabetes", make_pipeline(StandardScaler(), SVR(C=10.0)), None),
    ]


def export(est, X, is_classifier):
    """The ONNX model of est; classifiers without ZipMap (zipmap=False where the converter offers
    it: an SVC without probabilities has no ZipMap option and emits none)."""
    if is_classifier:
        last = est.steps[-1][1] if hasattr(est, "steps") else est
        try:
            return to_onnx(est, X[:1], options={id(last): {"zipmap": False}}, target_opset=OPSETS)
        except NameError:
            pass
    return to_onnx(est, X[:1], target_opset=OPSETS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", default="", help="comma-separated model names")
    args = ap.parse_args()
    out = os.path.abspath(args.outdir)
    os.makedirs(out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    entries = []
    for name, ds, est, transform in models():
        if only and name not in only:
            continue
        X, y = data(ds)
        if transform is not None:
            X = transform(X)
        est.fit(X, y)
        is_classifier = sklearn.base.is_classifier(est)
        onx = export(est, X, is_classifier)
        ops = collections.Counter((n.domain or "ai.onnx") + ":" + n.op_type for n in onx.graph.node)
        if any(op.endswith(":ZipMap") for op in ops):
            sys.exit("error: %s still has a ZipMap" % name)
        folder = os.path.join(out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(os.path.join(folder, "rows"))
        onnx.save(onx, os.path.join(folder, "model.onnx"))
        sess = ort.InferenceSession(os.path.join(folder, "model.onnx"), providers=["CPUExecutionProvider"])
        # 40 rows spread over the dataset (every class), and one row alone.
        rows = np.linspace(0, len(X) - 1, 40).astype(np.int64)
        cases = []
        for case, idx in (("rows", rows), ("one_row", rows[7:8])):
            os.makedirs(os.path.join(folder, case), exist_ok=True)
            feeds = {sess.get_inputs()[0].name: np.ascontiguousarray(X[idx])}
            res = sess.run(None, feeds)
            step = {"inputs": {}, "outputs": {}}
            for k, v in feeds.items():
                np.save(os.path.join(folder, case, "in_%s.npy" % k), v)
                step["inputs"][k] = "%s/%s/in_%s.npy" % (name, case, k)
            for o, v in zip(sess.get_outputs(), res):
                np.save(os.path.join(folder, case, "out_%s.npy" % o.name), v)
                step["outputs"][o.name] = "%s/%s/out_%s.npy" % (name, case, o.name)
            cases.append({"name": case, "steps": [step]})
        entries.append({"name": name, "model": "%s/model.onnx" % name,
                        "source": "scikit-learn %s %s on %s, skl2onnx %s" % (sklearn.__version__,
                                                                             type(est).__name__, ds,
                                                                             skl2onnx.__version__),
                        "tolerance": TOLERANCE, "cases": cases})
        print("%-34s %s" % (name, ", ".join("%s x%d" % (k.replace("ai.onnx.ml:", "ml:").replace("ai.onnx:", ""), v)
                                           for k, v in sorted(ops.items()))), flush=True)
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"models": entries}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
