// Avahi publishing and browsing; filled in by the pairing work.
