# Shared by scripts/setup, scripts/test and scripts/demo. Source it; do not run it.
# Everything large (the torch wheel and its CUDA libraries) lives outside the clone, in
# ${XDG_CACHE_HOME:-~/.cache}/plugtrain, and is reused by every clone while the version matches.

PLUGTRAIN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PLUGTRAIN_TORCH_VERSION=2.11.0
PLUGTRAIN_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/plugtrain
PLUGTRAIN_VENV=${PLUGTRAIN_VENV:-$PLUGTRAIN_CACHE/venv-torch-$PLUGTRAIN_TORCH_VERSION}
PLUGTRAIN_BUILD_DIR=${PLUGTRAIN_BUILD_DIR:-$PLUGTRAIN_ROOT/build}
# Written last by setup: the venv is complete only when this file names the version.
PLUGTRAIN_VENV_MARKER=$PLUGTRAIN_VENV/.plugtrain-ready

PLUGTRAIN_APT_PACKAGES=(
  cmake ninja-build g++ ccache pkg-config binutils
  libboost-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  libcurl4-openssl-dev  # the mlflow logger plugin's HTTP (plugins/mlflow)
  libgloo-dev  # declarations for c10d ProcessGroupGloo.hpp (the wheel lacks gloo headers)
  libgtest-dev libgmock-dev libbenchmark-dev
  libturbojpeg0-dev libspng-dev libarchive-dev  # JPEG/PNG (data/image_codec.cpp); CIFAR .tar.gz reading
  libsentencepiece-dev  # SentencePiece tokenizers for the text data set (readers/sentencepiece_tokenizer.h)
  dataset-fashion-mnist
  jargon-text
  clang-format  # scripts/check-format (scripts/test runs it)
)

# For the tests only: a real one-node Slurm (tests/slurm/local_slurm.sh) and one of 3 nodes in
# network namespaces (tests/slurm/netns_slurm.sh: iproute2's ip, util-linux's nsenter), and a TLS
# terminator with the certificate tool for the MLflow server of tests/loggers/mlflow_secure_test.cpp.
# Where these cannot be installed, the tests that need them skip and say why; nothing else needs them.
PLUGTRAIN_TEST_APT_PACKAGES=(munge slurmctld slurmd slurm-client iproute2 util-linux
  stunnel4 openssl)

# ccache keyed on paths relative to the clone, so a fresh clone reuses earlier compiles.
export CCACHE_BASEDIR=$PLUGTRAIN_ROOT
export CCACHE_NOHASHDIR=true

log() { printf '[plugtrain] %s\n' "$*" >&2; }
die() { printf 'plugtrain: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

install_debian_packages() {
  local missing=() p
  for p in "${PLUGTRAIN_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  # Debian's own python3 needs python3-venv for `python3 -m venv`; other Pythons carry it.
  python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_test_packages() {
  local missing=() p
  for p in "${PLUGTRAIN_TEST_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages for the Slurm and MLflow tests: ${missing[*]}"
  { as_root apt-get update -qq &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    log "could not install ${missing[*]}: the tests that need them will skip"
}

# For the tests only: a real MLflow server (tests/support/mlflow_server.h) and its Python client,
# which read back what the mlflow logger sent. 3.17.2: 3.18.0 is listed on PyPI before the
# mlflow-skinny it needs, so an unpinned install fails to resolve. Flask-WTF: the server's login
# app (`mlflow server --app-name basic-auth`) will not start without it.
PLUGTRAIN_MLFLOW_VERSION=3.17.2
install_test_python_tools() {
  if ! "$PLUGTRAIN_VENV/bin/python" -c 'import mlflow.server, sqlalchemy, flask_wtf' 2>/dev/null; then
    log "installing mlflow==$PLUGTRAIN_MLFLOW_VERSION and Flask-WTF into $PLUGTRAIN_VENV (for the tests, ~850 MB)"
    "$PLUGTRAIN_VENV/bin/python" -m pip install -q --no-cache-dir "mlflow==$PLUGTRAIN_MLFLOW_VERSION" flask-wtf==1.3.0
  fi
  # The tokenizers' parity tests compare with Python's own on the same model files. 0.1.98: the
  # release with a Python 3.11 wheel nearest Debian 12's libsentencepiece 0.1.97, the same
  # algorithms (0.2's unigram breaks ties otherwise: 10 of 666,397 Jargon File ids differ).
  if ! "$PLUGTRAIN_VENV/bin/python" -c 'import sentencepiece as s, sys; sys.exit(s.__version__ != "0.1.98")' 2>/dev/null; then
    log "installing sentencepiece==0.1.98 into $PLUGTRAIN_VENV (for the tokenizer parity tests)"
    "$PLUGTRAIN_VENV/bin/python" -m pip install -q --no-cache-dir sentencepiece==0.1.98
  fi
  # Hugging Face's tokenizers: trains the byte-level BPE tokenizer.json our reader is checked against.
  if ! "$PLUGTRAIN_VENV/bin/python" -c 'import tokenizers as t, sys; sys.exit(t.__version__ != "0.23.3")' 2>/dev/null; then
    log "installing tokenizers==0.23.3 into $PLUGTRAIN_VENV (for the byte-level BPE parity tests)"
    "$PLUGTRAIN_VENV/bin/python" -m pip install -q --no-cache-dir tokenizers==0.23.3
  fi
  # timm: the exported-model parity test trains its models (pretrained=False: no weights are
  # downloaded) through `plugtrain run` and in eager PyTorch. 1.0.31 runs on torch 2.11.0; pip
  # keeps the torch and torchvision already here.
  if ! "$PLUGTRAIN_VENV/bin/python" -c 'import timm, sys; sys.exit(timm.__version__ != "1.0.31")' 2>/dev/null; then
    log "installing timm==1.0.31 into $PLUGTRAIN_VENV (for the exported timm models' parity test)"
    "$PLUGTRAIN_VENV/bin/python" -m pip install -q --no-cache-dir timm==1.0.31
  fi
}

install_torch() {
  if [ -f "$PLUGTRAIN_VENV_MARKER" ] && [ "$(sed -n 1p "$PLUGTRAIN_VENV_MARKER")" = "$PLUGTRAIN_TORCH_VERSION" ]; then
    return 0
  fi
  log "installing torch==$PLUGTRAIN_TORCH_VERSION into $PLUGTRAIN_VENV (several GB, once per machine)"
  rm -rf "$PLUGTRAIN_VENV"  # a venv without its marker is a half-finished install
  mkdir -p "$(dirname "$PLUGTRAIN_VENV")"
  python3 -m venv "$PLUGTRAIN_VENV"
  "$PLUGTRAIN_VENV/bin/python" -m pip install -q --no-cache-dir "torch==$PLUGTRAIN_TORCH_VERSION" numpy
  local prefix
  prefix=$("$PLUGTRAIN_VENV/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
  [ -d "$prefix/Torch" ] || die "torch installed but $prefix/Torch is missing"
  printf '%s\n%s\n' "$PLUGTRAIN_TORCH_VERSION" "$prefix" > "$PLUGTRAIN_VENV_MARKER.tmp"
  mv "$PLUGTRAIN_VENV_MARKER.tmp" "$PLUGTRAIN_VENV_MARKER"
}

# Python packages the tests use beside torch: TensorBoard's own reader for our event files, and
# torchvision (the release built for this torch; --no-deps keeps the torch we have) for the
# model zoo's state_dict compatibility and the data pipeline's comparison benchmark; safetensors
# (no dependencies) to read `plugtrain export --format safetensors` files back.
PLUGTRAIN_TORCHVISION_VERSION=0.26.0
install_python_tools() {
  if ! "$PLUGTRAIN_VENV/bin/python" -c 'import tensorboard' 2>/dev/null; then
    log "installing tensorboard into $PLUGTRAIN_VENV"
    "$PLUGTRAIN_VENV/bin/python" -m pip install -q --no-cache-dir tensorboard
  fi
  if ! "$PLUGTRAIN_VENV/bin/python" -c 'import PIL, torchvision' 2>/dev/null; then
    log "installing torchvision==$PLUGTRAIN_TORCHVISION_VERSION into $PLUGTRAIN_VENV"
    "$PLUGTRAIN_VENV/bin/python" -m pip install -q --no-cache-dir pillow
    "$PLUGTRAIN_VENV/bin/python" -m pip install -q --no-cache-dir --no-deps "torchvision==$PLUGTRAIN_TORCHVISION_VERSION"
  fi
  if ! "$PLUGTRAIN_VENV/bin/python" -c 'import safetensors' 2>/dev/null; then
    log "installing safetensors into $PLUGTRAIN_VENV"
    "$PLUGTRAIN_VENV/bin/python" -m pip install -q --no-cache-dir safetensors
  fi
}

torch_cmake_prefix() { sed -n 2p "$PLUGTRAIN_VENV_MARKER"; }

setup() {
  install_debian_packages
  install_torch
  install_python_tools
}

# Configures once (or when the torch location changed) and builds what changed.
build() {
  local prefix
  prefix=$(torch_cmake_prefix)
  if ! grep -qs "CMAKE_PREFIX_PATH:UNINITIALIZED=$prefix\$" "$PLUGTRAIN_BUILD_DIR/CMakeCache.txt"; then
    log "configuring $PLUGTRAIN_BUILD_DIR"
    mkdir -p "$PLUGTRAIN_BUILD_DIR"
    cmake -S "$PLUGTRAIN_ROOT" -B "$PLUGTRAIN_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" "$@" >"$PLUGTRAIN_BUILD_DIR/configure.log" 2>&1 \
      || { cat "$PLUGTRAIN_BUILD_DIR/configure.log" >&2; die "cmake configure failed"; }
  fi
  # PLUGTRAIN_BUILD_TARGET: these targets (space-separated) instead of everything
  # (scripts/demo: plugtrain_first_run).
  log "building ${PLUGTRAIN_BUILD_TARGET:-everything} (${PLUGTRAIN_JOBS:-2} jobs)"
  # shellcheck disable=SC2086  # the list is split into targets on purpose
  cmake --build "$PLUGTRAIN_BUILD_DIR" -j "${PLUGTRAIN_JOBS:-2}" ${PLUGTRAIN_BUILD_TARGET:+--target $PLUGTRAIN_BUILD_TARGET}
}
