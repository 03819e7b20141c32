"""Image file formats on the native libraries TF uses (libjpeg-turbo, libpng, giflib, zlib)."""
