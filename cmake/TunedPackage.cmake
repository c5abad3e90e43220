# The Debian package: `cpack --config build/CPackConfig.cmake` writes tuned_<version>_amd64.deb
# with everything `cmake --install` puts in a prefix (binaries, the compiler API library and
# headers, the runtime archive, CMake and pkg-config files) under /usr, plus the systemd units
# in /usr/lib/systemd/system and the example settings, Kubernetes manifests and Slurm script in
# /usr/share/doc/tuned/examples. Depends come from dpkg-shlibdeps (the Debian libraries the
# binaries link). Installing enables no service: the units need credentials first (deploy/).
install(FILES deploy/systemd/tuned-serve.service deploy/systemd/tuned-worker@.service
        DESTINATION lib/systemd/system)  # systemd reads /usr/lib/systemd/system
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES deploy/README.md deploy/systemd/tuned-serve.default deploy/systemd/tuned-worker.default
              deploy/slurm/tuned-workers.sbatch
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(DIRECTORY deploy/k8s DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tuned)
set(CPACK_PACKAGE_VENDOR "tuned")
set(CPACK_PACKAGE_CONTACT "tuned developers <tuned-dev@lists.example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "auto-tuning service for tensor programs: server, workers, compiler API")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tuned_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # debug information stays in the build tree
# The API headers and the runtime archive are for building against tuned: a C++ compiler.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "g++, cmake, pkg-config")
include(CPack)
