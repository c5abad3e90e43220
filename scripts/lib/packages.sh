# Sourced by the scripts that install Debian packages: one way to find what is missing and
# install it, as root or through sudo.
#   install_missing_packages WHO PACKAGE...   installs those of PACKAGE... that are not installed
#                                             (printing "WHO: installing ..."); afterwards
#                                             $newly_installed lists them
#   as_root COMMAND...                        runs COMMAND as root

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_missing_packages() {
  local who=$1 p
  shift
  newly_installed=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || newly_installed+=("$p")
  done
  ((${#newly_installed[@]})) || return 0
  echo "$who: installing ${newly_installed[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${newly_installed[@]}"
}
