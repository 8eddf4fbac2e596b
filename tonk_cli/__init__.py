"""The ``tonk`` command line: thin parsers over functions that tests call too."""
