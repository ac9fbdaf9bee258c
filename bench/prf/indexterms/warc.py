import os
def body(root, body_key):
    fn, rng = body_key.split("#"); off, ln = map(int, rng.split(","))
    with open(os.path.join(root, "blobs", fn), "rb") as f:
        f.seek(off); b = f.read(ln)
    i = b.find(b"\r\n\r\n"); r = b[i+4:]; j = r.find(b"\r\n\r\n")
    return r[j+4:].decode("utf-8", "replace")
