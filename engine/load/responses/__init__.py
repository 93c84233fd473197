"""Response sources: stored model responses where an evaluation framework already wrote them.

One module per format, each with one job: read its files into :class:`~.records.LoggedRun`
records (model, samples with id, epoch, text, stored verdict and the log's own target), naming the
file and member or line of anything it cannot read:

* ``jsonl_responses`` — keyaudit's own ``responses/*.jsonl[.gz]`` (and ``csv``) files;
* ``inspect_log`` — inspect_ai logs, ``.eval`` (ZIP with zstd or DEFLATE members, read by
  ``zipmember``) and ``.json`` (``--log-format json``);
* ``lmeval_log`` — lm-evaluation-harness ``samples_<task>_<ts>.jsonl`` with their
  ``results_<ts>.json``;
* ``sources`` — what a source is (path, format, verdict scorer/filter, id field, model name),
  format detection from the content, and walking a folder of logs.

Checking samples against the benchmark's keys and applying the epochs policy happens in
``keyaudit.engine.load.benchmark``, which is the only caller.
"""
