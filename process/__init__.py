"""Support of an invcrawl process, below every other package (standard library only,
nothing of invcrawl's): ``interrupts`` (which stop signal ended the process, and the exit
code it makes) and ``secrets`` (credentials masked in everything the process prints,
logs or stores)."""
