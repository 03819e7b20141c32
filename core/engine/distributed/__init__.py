"""The distributed runtime, whatever carries its bytes: the master and worker services, their
client ends, the remote rendezvous and the message schemas, over a `transport.Channel`."""
