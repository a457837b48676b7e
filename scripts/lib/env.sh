# Sourced (not run) by scripts/run-bundled.sh and scripts/test.sh from the repository root: the
# build settings both share, so running one and then the other compiles nothing twice. Both
# configure the same preset into the same folder; the compiler launcher (ccache, when installed:
# scripts/install-deps.sh installs it in both modes) is set by CMakeLists.txt itself, so every
# entry point, pip install . included, gets the same compile commands.
OPTIMIUM_PRESET=release   # CMakePresets.json: Ninja, Release
OPTIMIUM_BUILD_DIR=build  # the preset's binaryDir
# ccache: paths relative to the checkout let a clone in another folder (and the Python wheel's
# build in build-py/) hit the same cache entries.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

# Configures the shared build folder (quietly: the scripts print what they build and run).
optimium_configure() {
  cmake --preset "$OPTIMIUM_PRESET" >/dev/null
}
