"""Port forwards ([[forward]] in keel.toml) at work: what each one is on this
router, how many connections it let in (its named nft counter) and whether
its target answers (collect, over probe's system access); adding and
removing one (edit: the new config checked by the loader before anything is
written); `keel forwards` (cli)."""
