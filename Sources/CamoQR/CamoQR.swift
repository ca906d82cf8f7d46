// QR codes and PNG files; filled in by the pairing work.
