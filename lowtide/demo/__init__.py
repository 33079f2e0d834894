"""What `lowtide demo` needs beyond the commands: a scripted reviewer."""
