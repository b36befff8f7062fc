# Sourced by .ci/run and .ci/deploy-check: "stage NAME" ends the stage
# under way, printing "== stage NAME (N s)" with its time, and begins the
# next one; "stage" alone ends the last. A script that exits within a
# stage (an error under set -e included) prints its time as it exits.
stage_name=""
stage_start=$SECONDS
stage() {
  if [ -n "$stage_name" ]; then
    echo "== stage $stage_name ($((SECONDS - stage_start)) s)"
  fi
  stage_name=${1:-}
  stage_start=$SECONDS
  if [ -n "$stage_name" ]; then
    echo "== stage $stage_name"
  fi
}
# stage_exit is for the script's EXIT trap.
stage_exit() {
  local status=$?
  if [ -n "$stage_name" ]; then
    echo "== stage $stage_name ($((SECONDS - stage_start)) s, exit status $status)"
    stage_name=""
  fi
}
