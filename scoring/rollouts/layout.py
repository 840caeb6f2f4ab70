"""The runs folder's layout: what `toolgym rollout --out RUNS` writes where (imports nothing)."""

#: one scored line per rollout
RESULTS = "results.jsonl"
#: the folder of signed transcripts, one file per rollout
TRANSCRIPTS = "transcripts"
