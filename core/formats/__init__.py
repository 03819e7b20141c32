"""TF's file formats and codecs; they use engine types only."""
