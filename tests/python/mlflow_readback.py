"""What MLflow's own client reads back of an experiment's runs, as JSON (tests/support/mlflow_server.h).

usage: mlflow_readback.py TRACKING_URI EXPERIMENT
"""
import json
import math
import sys

from mlflow.tracking import MlflowClient


def artifacts(client, run_id, path=None):
    out = []
    for f in client.list_artifacts(run_id, path):
        out.extend(artifacts(client, run_id, f.path) if f.is_dir else [f.path])
    return out


def number(v):
    return v if math.isfinite(v) else str(v)


def main(uri, name):
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        print("[]")
        return
    runs = client.search_runs([experiment.experiment_id], order_by=["attributes.start_time ASC"], max_results=1000)
    out = []
    for r in runs:
        metrics = {}
        for key in r.data.metrics:
            history = client.get_metric_history(r.info.run_id, key)
            metrics[key] = sorted([m.step, number(m.value), m.timestamp] for m in history)
        out.append({"id": r.info.run_id, "name": r.info.run_name, "status": r.info.status,
                    "parent": r.data.tags.get("mlflow.parentRunId"), "params": r.data.params,
                    "tags": r.data.tags, "metrics": metrics, "artifacts": sorted(artifacts(client, r.info.run_id))})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
