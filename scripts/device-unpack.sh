# On a GPU machine: the C++ bundle from .whl/bundle.tar.xz (xz-compressed, so that the bundle, the wheel and
# the Python libraries travel in one carry under 64 MiB), when .device-bundle itself was not carried.
[ -d .device-bundle ] || tar xJf .whl/bundle.tar.xz
