"""`embed`'s home: the settings (`EmbedSettings`, where the layer is chosen), the line logic both
engines run (`lines.py`), the local engine (`local.py`) and AllenNLP's hdf5 file (`hdf5_file.py`,
which only writes). The Ray engine is `spacy_elmo.ray_data`. Nothing is imported here, so the
hdf5 writer needs neither spaCy's pipeline nor torch."""
